//! Workload parameters: each workload declares its keys with defaults and docs; user values
//! (`--set key=value`) are checked against that declaration once, before anything runs.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::Error;

/// The type and default of one parameter.
#[derive(Debug, Clone, Copy)]
pub enum ParamDefault {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'static str),
}

/// One declared parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: ParamDefault,
    pub doc: &'static str,
}

impl ParamSpec {
    pub const fn int(name: &'static str, default: i64, doc: &'static str) -> Self {
        Self {
            name,
            default: ParamDefault::Int(default),
            doc,
        }
    }
    pub const fn float(name: &'static str, default: f64, doc: &'static str) -> Self {
        Self {
            name,
            default: ParamDefault::Float(default),
            doc,
        }
    }
    pub const fn bool(name: &'static str, default: bool, doc: &'static str) -> Self {
        Self {
            name,
            default: ParamDefault::Bool(default),
            doc,
        }
    }
    pub const fn str(name: &'static str, default: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            default: ParamDefault::Str(default),
            doc,
        }
    }

    fn default_value(&self) -> Value {
        match self.default {
            ParamDefault::Int(v) => Value::from(v),
            ParamDefault::Float(v) => Value::from(v),
            ParamDefault::Bool(v) => Value::from(v),
            ParamDefault::Str(v) => Value::from(v),
        }
    }

    /// Coerces a user value to this parameter's type (strings from the command line included).
    fn coerce(&self, workload: &str, given: &Value) -> Result<Value, Error> {
        let bad = |expected: &str| {
            Error::Config(format!(
                "workload {workload}: parameter {} must be {expected}, got {given}",
                self.name
            ))
        };
        match self.default {
            ParamDefault::Int(_) => match given {
                Value::Number(n) if n.is_i64() => Ok(given.clone()),
                Value::String(s) => s
                    .trim()
                    .parse::<i64>()
                    .map(Value::from)
                    .map_err(|_| bad("an integer")),
                _ => Err(bad("an integer")),
            },
            ParamDefault::Float(_) => match given {
                Value::Number(n) => n
                    .as_f64()
                    .filter(|v| v.is_finite())
                    .map(Value::from)
                    .ok_or_else(|| bad("a number")),
                Value::String(s) => s
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map(Value::from)
                    .ok_or_else(|| bad("a number")),
                _ => Err(bad("a number")),
            },
            ParamDefault::Bool(_) => match given {
                Value::Bool(_) => Ok(given.clone()),
                Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" | "on" | "yes" | "1" => Ok(Value::Bool(true)),
                    "false" | "off" | "no" | "0" => Ok(Value::Bool(false)),
                    _ => Err(bad("true or false")),
                },
                Value::Number(n) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => {
                    Ok(Value::Bool(n.as_i64() == Some(1)))
                }
                _ => Err(bad("true or false")),
            },
            ParamDefault::Str(_) => match given {
                Value::String(_) => Ok(given.clone()),
                Value::Number(_) | Value::Bool(_) => Ok(Value::from(given.to_string())),
                _ => Err(bad("a string")),
            },
        }
    }
}

/// Parameters resolved against a declaration: every declared key has a value of its type.
#[derive(Debug, Clone)]
pub struct Params {
    values: BTreeMap<String, Value>,
    explicit: Vec<String>,
}

impl Params {
    pub fn resolve(
        workload: &str,
        specs: &[ParamSpec],
        given: &BTreeMap<String, Value>,
    ) -> Result<Self, Error> {
        let mut values: BTreeMap<String, Value> = specs
            .iter()
            .map(|s| (s.name.to_string(), s.default_value()))
            .collect();
        let mut explicit = Vec::new();
        for (key, value) in given {
            let Some(spec) = specs.iter().find(|s| s.name == key) else {
                let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(Error::Config(format!(
                    "workload {workload} has no parameter {key:?}; its parameters are: {}",
                    known.join(", ")
                )));
            };
            values.insert(key.clone(), spec.coerce(workload, value)?);
            explicit.push(key.clone());
        }
        Ok(Self { values, explicit })
    }

    pub fn int(&self, name: &str) -> i64 {
        self.values
            .get(name)
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("undeclared int parameter {name}"))
    }

    pub fn float(&self, name: &str) -> f64 {
        self.values
            .get(name)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("undeclared float parameter {name}"))
    }

    pub fn bool(&self, name: &str) -> bool {
        self.values
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or_else(|| panic!("undeclared bool parameter {name}"))
    }

    pub fn str(&self, name: &str) -> &str {
        self.values
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("undeclared str parameter {name}"))
    }

    /// Whether the user set this key (rather than taking the default).
    pub fn is_explicit(&self, name: &str) -> bool {
        self.explicit.iter().any(|k| k == name)
    }

    pub fn set(&mut self, name: &str, value: Value) {
        self.values.insert(name.to_string(), value);
    }

    pub fn to_map(&self) -> BTreeMap<String, Value> {
        self.values.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::int("scale", 1, "size"),
        ParamSpec::bool("vacuum", true, "vacuum first"),
        ParamSpec::str("method", "range", "partitioning"),
        ParamSpec::float("h", 0.2, "shape"),
    ];

    fn given(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn defaults_fill_in_and_strings_are_coerced() {
        let p = Params::resolve(
            "w",
            SPECS,
            &given(&[("scale", Value::from("10")), ("vacuum", Value::from("off"))]),
        )
        .unwrap();
        assert_eq!(p.int("scale"), 10);
        assert!(!p.bool("vacuum"));
        assert_eq!(p.str("method"), "range");
        assert_eq!(p.float("h"), 0.2);
        let f = Params::resolve("w", SPECS, &given(&[("h", Value::from("0.5"))])).unwrap();
        assert_eq!(f.float("h"), 0.5);
        let f = Params::resolve("w", SPECS, &given(&[("h", Value::from(2))])).unwrap();
        assert_eq!(f.float("h"), 2.0);
        assert!(Params::resolve("w", SPECS, &given(&[("h", Value::from("x"))])).is_err());
        assert!(p.is_explicit("scale") && !p.is_explicit("method"));
    }

    #[test]
    fn unknown_key_is_refused_with_the_known_ones() {
        let e = Params::resolve("w", SPECS, &given(&[("scael", Value::from(3))])).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("\"scael\"") && text.contains("scale, vacuum, method, h"),
            "{text}"
        );
    }

    #[test]
    fn wrong_type_is_refused() {
        assert!(Params::resolve("w", SPECS, &given(&[("scale", Value::from("ten"))])).is_err());
        assert!(Params::resolve("w", SPECS, &given(&[("vacuum", Value::from("maybe"))])).is_err());
    }
}
