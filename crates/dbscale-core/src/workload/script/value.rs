//! pgbench's four value types (NULL, boolean, int, double), their coercions and their errors in
//! pgbench's words, and how a value is written into SQL: what the expression tree ([`super::expr`]),
//! its evaluation ([`super::eval`]) and the client's variables ([`super::vars`]) share.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Value {
    pub(super) fn type_name(self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    pub(super) fn to_bool(self) -> Result<bool, EvalError> {
        match self {
            Value::Bool(b) => Ok(b),
            other => Err(fail(format!(
                "cannot coerce {} to boolean",
                other.type_name()
            ))),
        }
    }

    pub(super) fn to_int(self) -> Result<i64, EvalError> {
        match self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => {
                let rounded = d.round_ties_even();
                // The doubles that fit in a bigint: [-2^63, 2^63).
                if rounded.is_nan()
                    || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&rounded)
                {
                    return Err(fail(format!("double to int overflow for {rounded:.6}")));
                }
                Ok(rounded as i64)
            }
            other => Err(fail(format!("cannot coerce {} to int", other.type_name()))),
        }
    }

    pub(super) fn to_double(self) -> Result<f64, EvalError> {
        match self {
            Value::Double(d) => Ok(d),
            Value::Int(i) => Ok(i as f64),
            other => Err(fail(format!(
                "cannot coerce {} to double",
                other.type_name()
            ))),
        }
    }

    /// Truth for CASE and `\if`: NULL and zero are false.
    pub fn truth(self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }
}

/// A run-time error, in pgbench's words (it fails the transaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError(pub String);

pub(super) fn fail(message: String) -> EvalError {
    EvalError(message)
}

/// A value as pgbench writes it into SQL.
pub fn write_value(value: Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("NULL"),
        Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(itoa::Buffer::new().format(i)),
        Value::Double(d) => out.push_str(&format_g15(d)),
    }
}

/// C's `%.15g`.
pub fn format_g15(d: f64) -> String {
    // pgbench prints with PostgreSQL's own snprintf, which spells these out.
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{d:.14e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..15).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mantissa), exponent.abs());
    }
    let decimals = (14 - exponent).max(0) as usize;
    trim(&format!("{d:.decimals$}"))
}
