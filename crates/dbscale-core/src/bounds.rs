//! The bounds of the run configuration's numbers, declared once: `RunConfig::validate` enforces
//! them and the contract (`contract.rs`) publishes them in the configuration's JSON Schema, where
//! a test holds Python's models to the same numbers.

use serde_json::Value;

/// Shortest and longest measured time or ramp: a time the engine can turn into a `Duration` and a
/// deadline without overflow; a week is a typo, a soak is several runs.
pub const MIN_DURATION_S: f64 = 0.1;
pub const MAX_DURATION_S: f64 = 7.0 * 24.0 * 3600.0;
pub const MAX_CLIENTS: i128 = 100_000;
pub const MAX_THREADS: i128 = 4_096;
pub const MAX_RATE_TPS: f64 = 1e8;
/// The slowest offered rate: one transaction in about 17 minutes (below it, a typo like 1e-300).
pub const MIN_RATE_TPS: f64 = 1e-3;
pub const MAX_TRIES: i128 = 1_000_000;
/// The shortest client-side transaction deadline: below it a deadline is a typo.
pub const MIN_TRANSACTION_TIMEOUT_S: f64 = 0.01;
/// The shortest interval anything is measured over.
pub const MIN_INTERVAL_S: f64 = 0.05;

/// A limit: whole numbers compare exactly, fractions as floats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    Whole(i128),
    Fraction(f64),
}

impl Limit {
    pub fn as_f64(self) -> f64 {
        match self {
            Limit::Whole(n) => n as f64,
            Limit::Fraction(x) => x,
        }
    }

    fn to_json(self) -> Value {
        match self {
            Limit::Whole(n) => i64::try_from(n)
                .map(Value::from)
                .or_else(|_| u64::try_from(n).map(Value::from))
                .unwrap_or_else(|_| Value::from(n as f64)),
            Limit::Fraction(x) => Value::from(x),
        }
    }
}

/// One numeric setting's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The schema type that holds the field, and the field.
    pub owner: &'static str,
    pub field: &'static str,
    /// Where the value sits in a configuration document.
    pub path: &'static [&'static str],
    /// How a refusal names it, and its unit.
    pub name: &'static str,
    pub unit: &'static str,
    pub min: Limit,
    /// The minimum itself is refused (`rate_tps > 0`).
    pub min_exclusive: bool,
    pub max: Option<Limit>,
}

const fn whole(
    owner: &'static str,
    path: &'static [&'static str],
    name: &'static str,
    min: i128,
    max: Option<i128>,
) -> Bound {
    Bound {
        owner,
        field: path[path.len() - 1],
        path,
        name,
        unit: "",
        min: Limit::Whole(min),
        min_exclusive: false,
        max: match max {
            Some(n) => Some(Limit::Whole(n)),
            None => None,
        },
    }
}

const fn seconds(path: &'static [&'static str], name: &'static str, min: f64, max: f64) -> Bound {
    Bound {
        owner: "RunConfig",
        field: path[path.len() - 1],
        path,
        name,
        unit: "s",
        min: Limit::Fraction(min),
        min_exclusive: false,
        max: Some(Limit::Fraction(max)),
    }
}

/// Every bound of the configuration. A field whose type alone bounds it (a `u32` weight, a `u64`
/// seed) needs no entry: the schema's format says it.
pub const BOUNDS: &[Bound] = &[
    whole("RunConfig", &["clients"], "clients", 1, Some(MAX_CLIENTS)),
    whole("RunConfig", &["threads"], "threads", 1, Some(MAX_THREADS)),
    seconds(&["duration_s"], "duration", MIN_DURATION_S, MAX_DURATION_S),
    seconds(&["ramp_s"], "ramp", 0.0, MAX_DURATION_S),
    Bound {
        owner: "RunConfig",
        field: "rate_tps",
        path: &["rate_tps"],
        name: "rate",
        unit: "",
        min: Limit::Fraction(MIN_RATE_TPS),
        min_exclusive: false,
        max: Some(Limit::Fraction(MAX_RATE_TPS)),
    },
    whole("RunConfig", &["max_tries"], "max_tries", 1, Some(MAX_TRIES)),
    whole(
        "RunConfig",
        &["transactions"],
        "transactions",
        1,
        Some(i64::MAX as i128),
    ),
    seconds(&["interval_s"], "interval", MIN_INTERVAL_S, MAX_DURATION_S),
    seconds(
        &["transaction_timeout_s"],
        "transaction_timeout",
        MIN_TRANSACTION_TIMEOUT_S,
        MAX_DURATION_S,
    ),
    Bound {
        owner: "RunConfig",
        field: "latency_limit_ms",
        path: &["latency_limit_ms"],
        name: "latency_limit",
        unit: " ms",
        min: Limit::Fraction(0.0),
        min_exclusive: true,
        max: Some(Limit::Fraction(MAX_DURATION_S * 1000.0)),
    },
    Bound {
        owner: "TransactionLogConfig",
        field: "sampling_rate",
        path: &["transaction_log", "sampling_rate"],
        name: "sampling_rate",
        unit: "",
        min: Limit::Fraction(0.0),
        min_exclusive: true,
        max: Some(Limit::Fraction(1.0)),
    },
    whole(
        "WorkerShare",
        &["share", "total_clients"],
        "a worker share's total clients",
        1,
        Some(MAX_CLIENTS),
    ),
    whole("LoadPart", &["load_part", "parts"], "load parts", 1, None),
];

impl Bound {
    /// Whether `value` (a JSON number, `number` as a float) lies within the bounds.
    pub fn holds(&self, value: &Value, number: f64) -> bool {
        if !number.is_finite() {
            return false;
        }
        let whole = value
            .as_i64()
            .map(i128::from)
            .or(value.as_u64().map(i128::from));
        let above = |limit: Limit, strict: bool| match (limit, whole) {
            (Limit::Whole(min), Some(n)) => n > min || (!strict && n == min),
            _ => number > limit.as_f64() || (!strict && number == limit.as_f64()),
        };
        let below = |limit: Limit| match (limit, whole) {
            (Limit::Whole(max), Some(n)) => n <= max,
            _ => number <= limit.as_f64(),
        };
        above(self.min, self.min_exclusive) && self.max.is_none_or(below)
    }

    /// The refusal's words: `duration must be from 0.1s to 604800s, got 0s`.
    pub fn refusal(&self, number: f64) -> String {
        let unit = self.unit;
        let low = self.min.as_f64();
        match (self.max, self.min_exclusive) {
            (_, true) => format!("{} must be positive, got {number}{unit}", self.name),
            (Some(max), false) => format!(
                "{} must be from {low}{unit} to {}{unit}, got {number}{unit}",
                self.name,
                max.as_f64()
            ),
            (None, false) => format!(
                "{} must be at least {low}{unit}, got {number}{unit}",
                self.name
            ),
        }
    }

    /// The JSON Schema keywords of these bounds.
    pub fn keywords(&self) -> Vec<(&'static str, Value)> {
        let mut out = vec![if self.min_exclusive {
            ("exclusiveMinimum", self.min.to_json())
        } else {
            ("minimum", self.min.to_json())
        }];
        if let Some(max) = self.max {
            out.push(("maximum", max.to_json()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_compare_exactly_at_the_edge() {
        let transactions = BOUNDS.iter().find(|b| b.field == "transactions").unwrap();
        let edge = Value::from(i64::MAX as u64);
        let over = Value::from(i64::MAX as u64 + 1);
        assert!(transactions.holds(&edge, edge.as_f64().unwrap()));
        assert!(!transactions.holds(&over, over.as_f64().unwrap()));
    }

    #[test]
    fn an_exclusive_minimum_refuses_the_minimum() {
        let sampling = BOUNDS.iter().find(|b| b.field == "sampling_rate").unwrap();
        assert!(!sampling.holds(&Value::from(0.0), 0.0));
        assert!(sampling.holds(&Value::from(0.5), 0.5));
    }

    #[test]
    fn a_rate_is_at_least_one_transaction_in_17_minutes() {
        let rate = BOUNDS.iter().find(|b| b.field == "rate_tps").unwrap();
        assert!(!rate.holds(&Value::from(0.0), 0.0));
        assert!(!rate.holds(&Value::from(1e-300), 1e-300));
        assert!(rate.holds(&Value::from(0.001), 0.001) && rate.holds(&Value::from(0.5), 0.5));
        assert_eq!(
            rate.refusal(0.0),
            "rate must be from 0.001 to 100000000, got 0"
        );
    }
}
