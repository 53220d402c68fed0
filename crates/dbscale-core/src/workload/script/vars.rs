//! A client's script variables, as pgbench keeps them: a value set by `\set` is typed; one from
//! `--define`, `\gset`, `\aset` or `\setshell` is text, typed on first use by pgbench's rules
//! (`null`; prefixes of `true`, `yes`, `false`, `no`, and `on`, `off`; an integer; a double).
//! In SQL a variable is its text: integers in decimal, doubles with 15 significant digits.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::value::{fail, write_value, EvalError, Value};

#[derive(Debug, Clone)]
enum Slot {
    Text(String),
    Typed(Value),
}

#[derive(Debug, Clone, Default)]
pub struct Variables {
    slots: HashMap<String, Slot, BuildHasherDefault<NameHasher>>,
}

/// FNV-1a over a name's bytes: variable names are short and chosen by the script's author, so a
/// keyed hash buys nothing, and SipHash costs more than the rest of a lookup.
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// pgbench's rule for variable names: a letter, `_` or a non-ASCII character, then those or
/// digits.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
}

impl Variables {
    pub fn set(&mut self, name: &str, value: Value) {
        self.put(name, Slot::Typed(value));
    }

    pub fn set_text(&mut self, name: &str, text: String) {
        self.put(name, Slot::Text(text));
    }

    fn put(&mut self, name: &str, slot: Slot) {
        match self.slots.get_mut(name) {
            Some(existing) => *existing = slot,
            None => {
                self.slots.insert(name.to_string(), slot);
            }
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.slots.contains_key(name)
    }

    /// The value for an expression; an error if undefined or not a value.
    pub fn value(&self, name: &str) -> Result<Value, EvalError> {
        match self.slots.get(name) {
            None => Err(fail(format!("undefined variable \"{name}\""))),
            Some(Slot::Typed(v)) => Ok(*v),
            Some(Slot::Text(text)) => typed(text)
                .ok_or_else(|| fail(format!("malformed variable \"{name}\" value: \"{text}\""))),
        }
    }

    /// Appends the variable's text (as SQL gets it); false if it is undefined.
    pub fn write_text(&self, name: &str, out: &mut String) -> bool {
        match self.slots.get(name) {
            None => false,
            Some(Slot::Text(text)) => {
                out.push_str(text);
                true
            }
            Some(Slot::Typed(v)) => {
                write_value(*v, out);
                true
            }
        }
    }
}

/// pgbench's reading of a text variable as a value (None: malformed).
fn typed(text: &str) -> Option<Value> {
    if text.is_empty() {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let prefix_of = |word: &str| word.starts_with(&lower);
    if lower == "null" {
        return Some(Value::Null);
    }
    if prefix_of("true") || prefix_of("yes") || lower == "on" {
        return Some(Value::Bool(true));
    }
    if prefix_of("false") || prefix_of("no") || lower == "off" || lower == "of" {
        return Some(Value::Bool(false));
    }
    if looks_like_int(text) {
        return text.trim().parse::<i64>().ok().map(Value::Int);
    }
    strtod(text).map(Value::Double)
}

/// C's `strtod` over the whole text, as pgbench's `strtodouble` uses it: leading white space,
/// decimal or hexadecimal (`0x1p4`) digits, `inf`, `infinity` and `nan` in any case; None on
/// trailing characters or a range error (overflow, or underflow below the normal doubles).
pub(super) fn strtod(text: &str) -> Option<f64> {
    let t = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = unsigned.to_ascii_lowercase();
    let magnitude = if let Some(hex) = lower.strip_prefix("0x") {
        hex_double(hex)?
    } else if ["inf", "infinity", "nan"].contains(&lower.as_str()) {
        return Some(match lower.as_str() {
            "nan" => f64::NAN,
            _ if negative => f64::NEG_INFINITY,
            _ => f64::INFINITY,
        });
    } else if unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        let d = unsigned.parse::<f64>().ok()?;
        if !super::lex::in_double_range(d, unsigned) {
            return None;
        }
        d
    } else {
        return None;
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// The digits after `0x`: hexadecimal digits with an optional point, then an optional binary
/// exponent (`p-3`).
fn hex_double(text: &str) -> Option<f64> {
    let (digits, exponent) = match text.split_once('p') {
        Some((digits, exponent)) => (digits, exponent.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut value = 0.0f64;
    for c in whole.chars().chain(fraction.chars()) {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let scale = exponent.checked_sub(4 * i32::try_from(fraction.len()).ok()?)?;
    let d = value * 2f64.powi(scale);
    (d.is_finite() && (value == 0.0 || d >= f64::MIN_POSITIVE)).then_some(d)
}

/// Optional spaces, an optional sign, digits, optional spaces (pgbench's `is_an_int`).
fn looks_like_int(text: &str) -> bool {
    let t = text.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_are_read_as_strtod_reads_them() {
        for (text, want) in [
            ("0x10", Some(16.0)),
            ("0x1p-2", Some(0.25)),
            ("-0X.8", Some(-0.5)),
            ("inf", Some(f64::INFINITY)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            (" 5.5", Some(5.5)),
            ("1e-300", Some(1e-300)),
            ("0.0e-999", Some(0.0)),
        ] {
            assert_eq!(strtod(text), want, "{text}");
        }
        assert!(strtod("NaN").is_some_and(f64::is_nan));
        for text in [
            "1e309", "1e-310", "5.5 ", "0x", "x1", "1.2.3", "", "+", "0xg",
        ] {
            assert_eq!(strtod(text), None, "{text}");
        }
    }

    #[test]
    fn text_values_are_typed_as_pgbench_types_them() {
        let mut vars = Variables::default();
        // The -D values of pgbench's expression test.
        for (name, text) in [
            ("foo", "-10.1"),
            ("bla", "false"),
            ("i", "+3"),
            ("n", "null"),
            ("t", "t"),
            ("f", "of"),
            ("d", "1.0"),
            ("y", "ye"),
            ("bad", "1.2.3"),
        ] {
            vars.set_text(name, text.into());
        }
        assert_eq!(vars.value("foo"), Ok(Value::Double(-10.1)));
        assert_eq!(vars.value("bla"), Ok(Value::Bool(false)));
        assert_eq!(vars.value("i"), Ok(Value::Int(3)));
        assert_eq!(vars.value("n"), Ok(Value::Null));
        assert_eq!(vars.value("t"), Ok(Value::Bool(true)));
        assert_eq!(vars.value("f"), Ok(Value::Bool(false)));
        assert_eq!(vars.value("d"), Ok(Value::Double(1.0)));
        assert_eq!(vars.value("y"), Ok(Value::Bool(true)));
        assert_eq!(
            vars.value("bad").unwrap_err().0,
            "malformed variable \"bad\" value: \"1.2.3\""
        );
        assert_eq!(
            vars.value("nope").unwrap_err().0,
            "undefined variable \"nope\""
        );
    }

    #[test]
    fn values_are_written_as_pgbench_writes_them() {
        let text = |v| {
            let mut out = String::new();
            write_value(v, &mut out);
            out
        };
        assert_eq!(text(Value::Int(-42)), "-42");
        assert_eq!(text(Value::Double(0.1 + 0.2)), "0.3");
        assert_eq!(text(Value::Double(1e20)), "1e+20");
        assert_eq!(text(Value::Double(123456.5)), "123456.5");
        assert_eq!(text(Value::Double(2.5e-5)), "2.5e-05");
        assert_eq!(text(Value::Double(3.0)), "3");
        assert_eq!(text(Value::Bool(true)), "true");
        assert_eq!(text(Value::Null), "NULL");
        assert!(valid_name("aid") && valid_name("_x1") && valid_name("été"));
        assert!(!valid_name("1x") && !valid_name("") && !valid_name("a-b"));
    }
}
