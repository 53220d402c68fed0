//! Calendar days: TPC-H's substitution parameters get their date bounds as literals (`date
//! '1998-09-02'`), computed here, so one query text runs on every dialect without its interval
//! arithmetic; TPC-C's loads write their timestamps' dates from here too.

/// A day of the proleptic Gregorian calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Day {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl Day {
    pub const fn new(year: i32, month: u32, day: u32) -> Self {
        Self { year, month, day }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    fn ordinal(self) -> i64 {
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    pub fn from_ordinal(z: i64) -> Self {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Self { year, month, day }
    }

    pub fn plus_days(self, days: i64) -> Self {
        Self::from_ordinal(self.ordinal() + days)
    }

    /// The same day `months` later (the queries only move firsts of months).
    pub fn plus_months(self, months: u32) -> Self {
        let index = self.month - 1 + months;
        Self {
            year: self.year + (index / 12) as i32,
            month: index % 12 + 1,
            day: self.day,
        }
    }

    pub fn plus_years(self, years: i32) -> Self {
        Self {
            year: self.year + years,
            ..self
        }
    }

    pub fn text(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_crosses_months_years_and_leap_days() {
        assert_eq!(Day::new(1998, 12, 1).plus_days(-90).text(), "1998-09-02");
        assert_eq!(Day::new(1996, 2, 28).plus_days(1).text(), "1996-02-29");
        assert_eq!(Day::new(1995, 3, 1).plus_days(30).text(), "1995-03-31");
        assert_eq!(Day::new(1997, 10, 1).plus_months(3).text(), "1998-01-01");
        assert_eq!(Day::new(1993, 1, 1).plus_years(1).text(), "1994-01-01");
        assert_eq!(Day::from_ordinal(0), Day::new(1970, 1, 1));
        assert_eq!(Day::from_ordinal(10_957).text(), "2000-01-01");
        assert_eq!(Day::from_ordinal(20_512).text(), "2026-02-28");
        assert_eq!(Day::from_ordinal(20_513).text(), "2026-03-01");
    }
}
