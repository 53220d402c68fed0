//! A TPC-C run's figures and judgement: tpmC, efficiency against 12.86 tpmC per warehouse, the
//! pass rule (the spec's 90th-percentile limits and 85% efficiency with waits; the Cloud
//! Report's New-Order p95 under 10 s without), and the run-time audits of clause 9.2
//! (`audits.rs`).

use super::audits::audits;
use super::terminal::*;
pub use crate::stats::tpcc::{PassRule, TpccSummary};
use crate::stats::LatencyHistogram;

/// The spec's maximum tpmC per warehouse with keying and think times (12.86).
pub const SPEC_TPMC_PER_WAREHOUSE: f64 = 12.86;
/// A wait-mode run shorter than this is dominated by its start (terminals key before their
/// first transaction), so its efficiency reads low.
const STEADY_WAIT_RUN_S: f64 = 600.0;

pub struct SummaryInput<'a> {
    pub warehouses: i64,
    pub active: i64,
    pub wait: bool,
    pub rule: PassRule,
    pub types: &'a [LatencyHistogram],
    pub tally: &'a [u64],
    pub duration_s: f64,
    pub c_last_source: &'a str,
}

pub fn summarize(input: &SummaryInput) -> TpccSummary {
    let count = |kind: usize| input.types.get(kind).map_or(0, LatencyHistogram::count);
    let minutes = input.duration_s / 60.0;
    let new_orders = count(NEW_ORDER);
    let all: u64 = (0..5).map(count).sum();
    let tpmc = new_orders as f64 / minutes;
    let efficiency_pct = 100.0 * tpmc / (SPEC_TPMC_PER_WAREHOUSE * input.active as f64);
    let mut reasons = Vec::new();
    let names = [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ];
    if input.rule.name == "spec" {
        for (kind, limit) in input.rule.p90_limits_s.iter().enumerate().take(5) {
            if count(kind) == 0 {
                reasons.push(format!("no {} completed", names[kind]));
                continue;
            }
            let p90 = input.types[kind].quantile_ms(0.90) / 1000.0;
            if p90 > *limit {
                reasons.push(format!("{} p90 {p90:.3} s > {limit} s", names[kind]));
            }
        }
        if efficiency_pct < input.rule.min_efficiency_pct {
            let mut reason = format!(
                "efficiency {efficiency_pct:.1}% < {}%",
                input.rule.min_efficiency_pct
            );
            if input.wait && input.duration_s < STEADY_WAIT_RUN_S {
                reason.push_str(&format!(
                    " (a {:.0} s run reads low: with keying and think times each terminal \
                     completes about one transaction per 20 s, the first ones only after its \
                     first keying time; run {} min or more, or give --ramp)",
                    input.duration_s,
                    STEADY_WAIT_RUN_S / 60.0
                ));
            }
            reasons.push(reason);
        }
    } else if new_orders == 0 {
        reasons.push("no new_order completed".into());
    } else {
        let p95 = input.types[NEW_ORDER].quantile_ms(0.95) / 1000.0;
        let limit = input.rule.new_order_p95_limit_s;
        if p95 >= limit {
            reasons.push(format!("new_order p95 {p95:.3} s >= {limit} s"));
        }
    }
    let audits = audits(input.types, input.tally, input.warehouses, all);
    let warnings = audits
        .iter()
        .filter(|a| a.status == "fail")
        .map(|a| {
            let value = a.value.map_or("-".to_string(), |v| format!("{v:.3}"));
            format!(
                "audit {} {value} outside [{}, {}]: {}",
                a.name, a.low, a.high, a.note
            )
        })
        .collect();
    TpccSummary {
        warehouses: input.warehouses,
        active_warehouses: input.active,
        wait: input.wait,
        tpmc,
        tpm_total: all as f64 / minutes,
        new_orders,
        rolled_back_new_orders: input.tally.get(ROLLED_BACK).copied().unwrap_or(0),
        efficiency_pct,
        efficiency_meaningful: input.wait,
        rule: input.rule.clone(),
        pass: reasons.is_empty(),
        reasons,
        audits,
        warnings,
        c_last_source: input.c_last_source.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(count: u64, micros: u64) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for _ in 0..count {
            h.record_us(micros);
        }
        h
    }

    fn rule(name: &str) -> PassRule {
        PassRule {
            name: name.into(),
            p90_limits_s: vec![5.0, 5.0, 5.0, 5.0, 20.0],
            min_efficiency_pct: 85.0,
            new_order_p95_limit_s: 10.0,
        }
    }

    #[test]
    fn tpmc_efficiency_and_the_nowait_rule() {
        let types = [
            histogram(4500, 2_000),
            histogram(4300, 1_000),
            histogram(400, 500),
            histogram(400, 9_000),
            histogram(400, 3_000),
        ];
        // 45 rolled back, 45,000 lines (10 per order), 45 remote lines, 645 remote payments,
        // 2,820 of 4,700 by name, 4 of 4,000 districts skipped.
        let tally = [45, 45_000, 450, 645, 2_820, 4];
        let input = SummaryInput {
            warehouses: 10,
            active: 10,
            wait: false,
            rule: rule("cloud-report"),
            types: &types,
            tally: &tally,
            duration_s: 60.0,
            c_last_source: "load",
        };
        let s = summarize(&input);
        assert_eq!(s.tpmc, 4500.0);
        assert!((s.efficiency_pct - 4500.0 / 128.6 * 100.0).abs() < 1e-9);
        assert!(s.pass && !s.efficiency_meaningful, "{:?}", s.reasons);
        let status: Vec<&str> = s.audits.iter().map(|a| a.status.as_str()).collect();
        assert_eq!(
            status,
            ["pass", "pass", "pass", "pass", "pass", "pass"],
            "{:?}",
            s.audits
        );
        let slow = [
            histogram(4500, 11_000_000),
            histogram(1, 1),
            histogram(1, 1),
            histogram(1, 1),
            histogram(1, 1),
        ];
        let s = summarize(&SummaryInput {
            types: &slow,
            ..input
        });
        assert!(!s.pass);
        assert!(
            s.reasons[0].starts_with("new_order p95 11.0"),
            "{:?}",
            s.reasons
        );
    }

    #[test]
    fn the_spec_rule_checks_every_type_and_efficiency() {
        let types = [
            histogram(100, 6_000_000),
            histogram(100, 1_000),
            histogram(10, 1_000),
            histogram(10, 1_000),
            histogram(10, 1_000),
        ];
        let tally = [0; 6];
        let s = summarize(&SummaryInput {
            warehouses: 1,
            active: 1,
            wait: true,
            rule: rule("spec"),
            types: &types,
            tally: &tally,
            duration_s: 600.0,
            c_last_source: "load",
        });
        assert_eq!(s.tpmc, 10.0);
        assert!(!s.pass);
        assert!(
            s.reasons.iter().any(|r| r.starts_with("new_order p90 6.0")),
            "{:?}",
            s.reasons
        );
        assert!(
            s.reasons.iter().any(|r| r.starts_with("efficiency 77.8%")),
            "{:?}",
            s.reasons
        );
        // 600 s is long enough not to blame the run's length.
        assert!(!s.reasons.iter().any(|r| r.contains("reads low")));
        let few = [
            histogram(8, 1_000),
            histogram(8, 1_000),
            histogram(1, 1_000),
            histogram(1, 1_000),
            histogram(1, 1_000),
        ];
        let short = summarize(&SummaryInput {
            warehouses: 1,
            active: 1,
            wait: true,
            rule: rule("spec"),
            types: &few,
            tally: &tally,
            duration_s: 60.0,
            c_last_source: "load",
        });
        assert!(
            short
                .reasons
                .iter()
                .any(|r| r.contains("a 60 s run reads low") && r.contains("run 10 min or more")),
            "{:?}",
            short.reasons
        );
        assert!(
            s.audits.iter().all(|a| a.status == "skip"),
            "too few transactions"
        );
    }
}
