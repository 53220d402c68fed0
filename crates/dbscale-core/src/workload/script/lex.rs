//! The tokens of pgbench's expression language: numbers (a bigint, or a double with a point or
//! an exponent; 9223372036854775808 only after a unary minus), TRUE, FALSE, NULL, `:variables`,
//! words (functions and keywords, case-insensitive) and operators.

/// A parse error: what is wrong and the 0-based character column where it was noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Int(i64),
    MaxIntPlusOne, // 9223372036854775808: valid only after a unary minus
    Double(f64),
    Bool(bool),
    Null,
    Var(String),
    Word(String), // a function name or a keyword
    Op(&'static str),
    End,
}

const OPERATORS: &[&str] = &[
    "<=", ">=", "<>", "!=", "<<", ">>", "(", ")", ",", "+", "-", "*", "/", "%", "<", ">", "=", "|",
    "#", "&", "~",
];

pub(super) fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let ident = |i: &mut usize| {
            let from = *i;
            while *i < chars.len() && (chars[*i].is_alphanumeric() || chars[*i] == '_') {
                *i += 1;
            }
            chars[from..*i].iter().collect::<String>()
        };
        if c == ':' {
            i += 1;
            let name = ident(&mut i);
            if name.is_empty() {
                return Err(error("unexpected character (:)", start));
            }
            out.push((Tok::Var(name), start));
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            out.push((number(&chars, &mut i)?, start));
        } else if c.is_alphabetic() || c == '_' {
            let word = ident(&mut i);
            let tok = match word.to_ascii_lowercase().as_str() {
                "true" => Tok::Bool(true),
                "false" => Tok::Bool(false),
                "null" => Tok::Null,
                _ => Tok::Word(word.to_ascii_lowercase()),
            };
            out.push((tok, start));
        } else if let Some(op) = OPERATORS.iter().find(|op| text_at(&chars, i, op)) {
            i += op.len();
            out.push((Tok::Op(op), start));
        } else {
            return Err(error(&format!("unexpected character ({c})"), start));
        }
    }
    out.push((Tok::End, chars.len()));
    Ok(out)
}

fn text_at(chars: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, c)| chars.get(i + k) == Some(&c))
}

fn number(chars: &[char], i: &mut usize) -> Result<Tok, ParseError> {
    let start = *i;
    while *i < chars.len() && chars[*i].is_ascii_digit() {
        *i += 1;
    }
    let mut double = false;
    if chars.get(*i) == Some(&'.') {
        double = true;
        *i += 1;
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
    }
    if matches!(chars.get(*i), Some('e' | 'E')) {
        let sign = matches!(chars.get(*i + 1), Some('+' | '-'));
        if chars
            .get(*i + 1 + usize::from(sign))
            .is_some_and(char::is_ascii_digit)
        {
            double = true;
            *i += 1 + usize::from(sign);
            while *i < chars.len() && chars[*i].is_ascii_digit() {
                *i += 1;
            }
        }
    }
    let text: String = chars[start..*i].iter().collect();
    if double {
        return match text.parse::<f64>() {
            Ok(d) if in_double_range(d, &text) => Ok(Tok::Double(d)),
            _ => Err(error(&format!("double constant overflow ({text})"), start)),
        };
    }
    match text.parse::<i64>() {
        Ok(n) => Ok(Tok::Int(n)),
        Err(_) if text == "9223372036854775808" => Ok(Tok::MaxIntPlusOne),
        Err(_) => Err(error(&format!("bigint constant overflow ({text})"), start)),
    }
}

/// Whether strtod would read `text` as `d` without a range error: neither infinite nor, for
/// digits that are not all zero, below the smallest normal double (C's underflow).
pub(super) fn in_double_range(d: f64, text: &str) -> bool {
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    let zero = !mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    d.is_finite() && (zero || d.abs() >= f64::MIN_POSITIVE)
}

pub(super) fn error(message: &str, column: usize) -> ParseError {
    ParseError {
        message: message.to_string(),
        column,
    }
}
