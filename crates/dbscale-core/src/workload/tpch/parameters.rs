//! The substitution parameters of the 22 queries (TPC-H specification 2.4.1.3 - 2.4.22.3): drawn
//! from the run's seed within the ranges qgen uses, over the domains the data was generated from
//! (tpchgen's distributions: nations and their regions, segments, part types, containers, colors,
//! ship modes), or the specification's qualification values. Dates arrive as computed literals.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::Rng;
use tpchgen::distribution::Distributions;

use crate::workload::calendar::Day;

/// The values of query `number`'s placeholders, in order.
pub type Values = Vec<String>;

/// The specification's qualification parameters (the answers TPC publishes are for these).
pub fn qualification(number: usize, scale_factor: f64) -> Values {
    let v = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Values>();
    match number {
        1 => vec![Day::new(1998, 12, 1).plus_days(-90).text()],
        2 => v(&["15", "BRASS", "EUROPE"]),
        3 => v(&["BUILDING", "1995-03-15"]),
        4 => months(Day::new(1993, 7, 1), 3),
        5 => [v(&["ASIA"]), years(Day::new(1994, 1, 1))].concat(),
        6 => [years(Day::new(1994, 1, 1)), discount(6), v(&["24"])].concat(),
        7 => v(&["FRANCE", "GERMANY"]),
        8 => v(&["BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"]),
        9 => v(&["green"]),
        10 => months(Day::new(1993, 10, 1), 3),
        11 => vec!["GERMANY".into(), fraction(scale_factor)],
        12 => [v(&["MAIL", "SHIP"]), years(Day::new(1994, 1, 1))].concat(),
        13 => v(&["special", "requests"]),
        14 => months(Day::new(1995, 9, 1), 1),
        15 => months(Day::new(1996, 1, 1), 3),
        16 => v(&[
            "Brand#45",
            "MEDIUM POLISHED",
            "49",
            "14",
            "23",
            "45",
            "19",
            "3",
            "36",
            "9",
        ]),
        17 => v(&["Brand#23", "MED BOX"]),
        18 => v(&["300"]),
        19 => v(&["1", "10", "20", "Brand#12", "Brand#23", "Brand#34"]),
        20 => [v(&["forest"]), years(Day::new(1994, 1, 1)), v(&["CANADA"])].concat(),
        21 => v(&["SAUDI ARABIA"]),
        22 => v(&["13", "31", "23", "29", "30", "18", "17"]),
        _ => unreachable!("TPC-H has 22 queries"),
    }
}

/// Parameters drawn as qgen draws them (its ranges; the engine's generator).
pub fn random(number: usize, scale_factor: f64, rng: &mut SmallRng) -> Values {
    let d = Distributions::static_default();
    let pick = |rng: &mut SmallRng, values: &[&'static str]| -> String {
        values.choose(rng).expect("a non-empty domain").to_string()
    };
    let int = |rng: &mut SmallRng, low: i64, high: i64| rng.gen_range(low..=high).to_string();
    let first_of_month = |rng: &mut SmallRng, from: (i32, u32), to: (i32, u32)| {
        let span = (to.0 - from.0) * 12 + to.1 as i32 - from.1 as i32;
        Day::new(from.0, from.1, 1).plus_months(rng.gen_range(0..=span) as u32)
    };
    let jan_first = |rng: &mut SmallRng| Day::new(rng.gen_range(1993..=1997), 1, 1);
    let brand =
        |rng: &mut SmallRng| format!("Brand#{}{}", rng.gen_range(1..=5), rng.gen_range(1..=5));
    let nation = |rng: &mut SmallRng| pick(rng, d.nations().get_values());
    match number {
        1 => vec![Day::new(1998, 12, 1)
            .plus_days(-rng.gen_range(60..=120))
            .text()],
        2 => vec![
            int(rng, 1, 50),
            pick(rng, &type_words(2)),
            pick(rng, d.regions().get_values()),
        ],
        3 => {
            let day = Day::new(1995, 3, 1).plus_days(rng.gen_range(0..=30));
            vec![pick(rng, d.market_segments().get_values()), day.text()]
        }
        4 => months(first_of_month(rng, (1993, 1), (1997, 10)), 3),
        5 => [
            vec![pick(rng, d.regions().get_values())],
            years(jan_first(rng)),
        ]
        .concat(),
        6 => {
            let hundredths = rng.gen_range(2..=9);
            [
                years(jan_first(rng)),
                discount(hundredths),
                vec![int(rng, 24, 25)],
            ]
            .concat()
        }
        7 => {
            let mut two: Vec<&str> = d
                .nations()
                .get_values()
                .choose_multiple(rng, 2)
                .copied()
                .collect();
            two.shuffle(rng);
            two.iter().map(|s| s.to_string()).collect()
        }
        8 => {
            let index = rng.gen_range(0..d.nations().size());
            let region = d
                .regions()
                .get_value(d.nations().get_weight(index) as usize);
            vec![
                d.nations().get_value(index).to_string(),
                region.to_string(),
                pick(rng, d.part_types().get_values()),
            ] // fmt: skip
        }
        9 => vec![pick(rng, d.part_colors().get_values())],
        10 => months(first_of_month(rng, (1993, 2), (1995, 1)), 3),
        11 => vec![nation(rng), fraction(scale_factor)],
        12 => {
            let two: Vec<String> = d
                .ship_modes()
                .get_values()
                .choose_multiple(rng, 2)
                .map(|s| s.to_string())
                .collect(); // fmt: skip
            [two, years(jan_first(rng))].concat()
        }
        13 => vec![
            pick(rng, &["special", "pending", "unusual", "express"]),
            pick(rng, &["packages", "requests", "accounts", "deposits"]),
        ],
        14 => months(first_of_month(rng, (1993, 1), (1997, 12)), 1),
        15 => months(first_of_month(rng, (1993, 1), (1997, 10)), 3),
        16 => {
            let mut sizes: Vec<u32> = (1..=50).collect();
            sizes.shuffle(rng);
            let mut values = vec![brand(rng), pick(rng, &type_words(0..2))];
            values.extend(sizes[..8].iter().map(u32::to_string));
            values
        }
        17 => vec![brand(rng), pick(rng, d.part_containers().get_values())],
        18 => vec![int(rng, 312, 315)],
        19 => vec![
            int(rng, 1, 10),
            int(rng, 10, 20),
            int(rng, 20, 30),
            brand(rng),
            brand(rng),
            brand(rng),
        ], // fmt: skip
        20 => [
            vec![pick(rng, d.part_colors().get_values())],
            years(jan_first(rng)),
            vec![nation(rng)],
        ]
        .concat(), // fmt: skip
        21 => vec![nation(rng)],
        22 => {
            let mut codes: Vec<u32> = (10..=34).collect();
            codes.shuffle(rng);
            codes[..7].iter().map(u32::to_string).collect()
        }
        _ => unreachable!("TPC-H has 22 queries"),
    }
}

/// A period's first day and the day after it ends.
fn months(start: Day, months: u32) -> Values {
    vec![start.text(), start.plus_months(months).text()]
}

fn years(start: Day) -> Values {
    vec![start.text(), start.plus_years(1).text()]
}

/// Q6's discount band: `hundredths` +- 0.01.
fn discount(hundredths: u32) -> Values {
    vec![
        format!("0.{:02}", hundredths - 1),
        format!("0.{:02}", hundredths + 1),
    ]
}

/// Q11's fraction, 0.0001 / SF (a fixed 0.0001 is wrong off scale factor 1).
pub fn fraction(scale_factor: f64) -> String {
    let text = format!("{:.12}", 0.0001 / scale_factor);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The distinct words of the part types at `words` (0: STANDARD..., 1: ANODIZED..., 2: TIN...),
/// joined by a space when a range.
fn type_words(words: impl Into<WordRange>) -> Vec<&'static str> {
    let range = words.into();
    let mut found: Vec<&'static str> = Vec::new();
    for full in Distributions::static_default().part_types().get_values() {
        let cut: Vec<usize> = std::iter::once(0)
            .chain(full.match_indices(' ').map(|(i, _)| i + 1))
            .collect();
        let start = cut[range.0];
        let end = if range.1 < cut.len() {
            cut[range.1] - 1
        } else {
            full.len()
        };
        let phrase = &full[start..end];
        if !found.contains(&phrase) {
            found.push(phrase);
        }
    }
    found
}

/// Words `from..to` of a type.
struct WordRange(usize, usize);

impl From<usize> for WordRange {
    fn from(word: usize) -> Self {
        WordRange(word, word + 1)
    }
}

impl From<std::ops::Range<usize>> for WordRange {
    fn from(words: std::ops::Range<usize>) -> Self {
        WordRange(words.start, words.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpch::queries::parameter_count;
    use rand::SeedableRng;

    #[test]
    fn every_query_gets_as_many_values_as_it_has_placeholders() {
        let mut rng = SmallRng::seed_from_u64(1);
        for q in 1..=22 {
            assert_eq!(
                qualification(q, 1.0).len(),
                parameter_count(q),
                "Q{q} qualification"
            );
            for _ in 0..50 {
                assert_eq!(random(q, 0.1, &mut rng).len(), parameter_count(q), "Q{q}");
            }
        }
    }

    #[test]
    fn domains_and_ranges_are_qgens() {
        assert_eq!(type_words(2), ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"]);
        assert!(type_words(0..2).contains(&"MEDIUM POLISHED"));
        assert_eq!(type_words(0..2).len(), 30);
        assert_eq!(fraction(1.0), "0.0001");
        assert_eq!(fraction(0.01), "0.01");
        assert_eq!(qualification(1, 1.0), ["1998-09-02"]);
        assert_eq!(
            qualification(6, 1.0),
            ["1994-01-01", "1995-01-01", "0.05", "0.07", "24"]
        );
        let mut rng = SmallRng::seed_from_u64(2);
        for _ in 0..200 {
            let q8 = random(8, 1.0, &mut rng);
            let d = Distributions::static_default();
            let index = d
                .nations()
                .get_values()
                .iter()
                .position(|n| *n == q8[0])
                .unwrap();
            assert_eq!(
                q8[1],
                d.regions()
                    .get_value(d.nations().get_weight(index) as usize)
            );
            let q7 = random(7, 1.0, &mut rng);
            assert_ne!(q7[0], q7[1]);
            let q1 = random(1, 1.0, &mut rng);
            assert!(
                ("1998-08-03".."1998-10-03").contains(&q1[0].as_str()),
                "{q1:?}"
            );
            let q22 = random(22, 1.0, &mut rng);
            let mut codes = q22.clone();
            codes.sort();
            codes.dedup();
            assert_eq!(codes.len(), 7);
        }
    }
}
