//! Rows of a table in a reusable buffer, and their three encodings: PostgreSQL's binary COPY
//! tuples, MySQL's LOAD DATA text and MySQL statement parameters. Values are typed so that money stays exact (scaled
//! integers) and times are written once in each wire format.

use crate::driver::Param;

use super::random;
use rand::rngs::SmallRng;

/// One value of a row. Text points into the buffer's shared string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    /// A decimal as an integer count of 10^-scale units (1234, 2 is 12.34).
    Decimal(i64, u8),
    Text(u32, u32),
    /// The load's timestamp (every row of a load gets the same one).
    Now,
    Null,
}

/// Rows of one table: `width` values each, back to back.
pub struct RowBuffer {
    pub width: usize,
    values: Vec<Value>,
    text: String,
    /// Decimals and times as text, for MySQL parameters (built on demand).
    rendered: Vec<String>,
}

impl RowBuffer {
    pub fn new(width: usize) -> Self {
        Self {
            width,
            values: Vec::new(),
            text: String::new(),
            rendered: Vec::new(),
        }
    }

    /// Empties the buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.values.clear();
        self.text.clear();
        self.rendered.clear();
    }

    pub fn rows(&self) -> usize {
        self.values.len() / self.width
    }

    /// About how many bytes the rows take as text (to size buffers once).
    pub fn text_size_hint(&self) -> usize {
        self.text.len() + 12 * self.values.len()
    }

    pub fn int(&mut self, v: i64) {
        self.values.push(Value::Int(v));
    }

    pub fn decimal(&mut self, units: i64, scale: u8) {
        self.values.push(Value::Decimal(units, scale));
    }

    pub fn now(&mut self) {
        self.values.push(Value::Now);
    }

    pub fn null(&mut self) {
        self.values.push(Value::Null);
    }

    pub fn text(&mut self, s: &str) {
        let start = self.text.len();
        self.text.push_str(s);
        self.close_text(start);
    }

    /// A random string written by `fill` straight into the buffer.
    pub fn random_text(&mut self, rng: &mut SmallRng, fill: fn(&mut SmallRng, &mut String)) {
        let start = self.text.len();
        fill(rng, &mut self.text);
        self.close_text(start);
    }

    pub fn astring(&mut self, rng: &mut SmallRng, min: usize, max: usize) {
        let start = self.text.len();
        random::push_astring(rng, min, max, &mut self.text);
        self.close_text(start);
    }

    fn close_text(&mut self, start: usize) {
        self.values
            .push(Value::Text(start as u32, self.text.len() as u32));
    }

    fn text_of(&self, start: u32, end: u32) -> &str {
        &self.text[start as usize..end as usize]
    }

    /// Appends the rows as binary COPY tuples; `now_us` is the load time in PostgreSQL's epoch
    /// (microseconds since 2000-01-01).
    pub fn copy_binary(&self, now_us: i64, out: &mut Vec<u8>) {
        for row in self.values.chunks(self.width) {
            out.extend_from_slice(&(self.width as i16).to_be_bytes());
            for value in row {
                match *value {
                    Value::Int(v) => {
                        out.extend_from_slice(&4i32.to_be_bytes());
                        out.extend_from_slice(&(v as i32).to_be_bytes());
                    }
                    Value::Decimal(units, scale) => numeric_binary(units, scale, out),
                    Value::Text(start, end) => {
                        let text = self.text_of(start, end);
                        out.extend_from_slice(&(text.len() as i32).to_be_bytes());
                        out.extend_from_slice(text.as_bytes());
                    }
                    Value::Now => {
                        out.extend_from_slice(&8i32.to_be_bytes());
                        out.extend_from_slice(&now_us.to_be_bytes());
                    }
                    Value::Null => out.extend_from_slice(&(-1i32).to_be_bytes()),
                }
            }
        }
    }

    /// Appends the rows in LOAD DATA's default text format: a tab between values, a newline
    /// after each row, `\N` for NULL, backslash escapes for tab, newline and backslash; `now` is
    /// the load time as `YYYY-MM-DD HH:MM:SS`.
    pub fn load_data_text(&self, now: &str, out: &mut Vec<u8>) {
        let mut ints = itoa::Buffer::new();
        for row in self.values.chunks(self.width) {
            for (i, value) in row.iter().enumerate() {
                if i > 0 {
                    out.push(b'\t');
                }
                match *value {
                    Value::Int(v) => out.extend_from_slice(ints.format(v).as_bytes()),
                    Value::Decimal(units, scale) => push_decimal(units, scale, out),
                    Value::Text(start, end) => push_escaped(self.text_of(start, end), out),
                    Value::Now => out.extend_from_slice(now.as_bytes()),
                    Value::Null => out.extend_from_slice(b"\\N"),
                }
            }
            out.push(b'\n');
        }
    }

    /// The rows as statement parameters for a multi-row INSERT; `now` is the load time as
    /// `YYYY-MM-DD HH:MM:SS`.
    pub fn params<'a>(&'a mut self, now: &'a str) -> Vec<Param<'a>> {
        self.rendered.clear();
        for value in &self.values {
            if let Value::Decimal(units, scale) = *value {
                self.rendered.push(decimal_text(units, scale));
            }
        }
        let mut rendered = self.rendered.iter();
        self.values
            .iter()
            .map(|value| match *value {
                Value::Int(v) => Param::Int(v),
                Value::Decimal(..) => Param::Text(rendered.next().expect("rendered above")),
                Value::Text(start, end) => Param::Text(&self.text[start as usize..end as usize]),
                Value::Now => Param::Text(now),
                Value::Null => Param::Null,
            })
            .collect()
    }
}

/// `units` x 10^-scale as decimal text: (-1005, 2) is "-10.05".
pub fn decimal_text(units: i64, scale: u8) -> String {
    let mut out = Vec::with_capacity(24);
    push_decimal(units, scale, &mut out);
    String::from_utf8(out).expect("digits are ASCII")
}

fn push_decimal(units: i64, scale: u8, out: &mut Vec<u8>) {
    if units < 0 {
        out.push(b'-');
    }
    let abs = units.unsigned_abs();
    let factor = 10u64.pow(u32::from(scale));
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(digits.format(abs / factor).as_bytes());
    if scale > 0 {
        out.push(b'.');
        let fraction = digits.format(abs % factor).as_bytes();
        out.resize(out.len() + usize::from(scale) - fraction.len(), b'0');
        out.extend_from_slice(fraction);
    }
}

fn push_escaped(text: &str, out: &mut Vec<u8>) {
    let bytes = text.as_bytes();
    if !bytes.iter().any(|b| matches!(b, b'\t' | b'\n' | b'\\')) {
        out.extend_from_slice(bytes);
        return;
    }
    for &b in bytes {
        match b {
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            _ => out.push(b),
        }
    }
}

/// PostgreSQL's binary NUMERIC: digit count, weight, sign, display scale, then base-10000
/// digits, most significant first, without leading or trailing zero digits.
fn numeric_binary(units: i64, scale: u8, out: &mut Vec<u8>) {
    assert!(scale <= 4, "scales above 4 need more fraction digits");
    let abs = units.unsigned_abs();
    let factor = 10u64.pow(u32::from(scale));
    let mut integer = abs / factor;
    let fraction = (abs % factor) * 10u64.pow(u32::from(4 - scale));
    // Base-10000 digits: integer part (least significant first), then the fraction digit.
    let mut int_digits = Vec::new();
    while integer > 0 {
        int_digits.push((integer % 10_000) as i16);
        integer /= 10_000;
    }
    int_digits.reverse();
    let mut digits = int_digits.clone();
    digits.push(fraction as i16);
    let mut weight = int_digits.len() as i16 - 1;
    while digits.first() == Some(&0) {
        digits.remove(0);
        weight -= 1;
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.is_empty() {
        weight = 0;
    }
    let sign: u16 = if units < 0 && !digits.is_empty() {
        0x4000
    } else {
        0
    };
    out.extend_from_slice(&((8 + 2 * digits.len()) as i32).to_be_bytes());
    out.extend_from_slice(&(digits.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&u16::from(scale).to_be_bytes());
    for digit in digits {
        out.extend_from_slice(&digit.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(units: i64, scale: u8) -> Vec<i16> {
        let mut out = Vec::new();
        numeric_binary(units, scale, &mut out);
        assert_eq!(
            i32::from_be_bytes(out[0..4].try_into().unwrap()) as usize,
            out.len() - 4
        );
        out[4..]
            .chunks(2)
            .map(|c| i16::from_be_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn numerics_encode_as_postgres_sends_them() {
        // ndigits, weight, sign, dscale, digits...
        assert_eq!(numeric(30_000_000, 2), [1, 1, 0, 2, 30]); // 300000.00 = 30 * 10000^1
        assert_eq!(numeric(-1000, 2), [1, 0, 0x4000, 2, 10]); // -10.00
        assert_eq!(numeric(1234, 4), [1, -1, 0, 4, 1234]); // 0.1234
        assert_eq!(numeric(0, 2), [0, 0, 0, 2]);
        assert_eq!(numeric(123_456_789, 2), [3, 1, 0, 2, 123, 4567, 8900]); // 1234567.89
        assert_eq!(numeric(5, 2), [1, -1, 0, 2, 500]); // 0.05
    }

    #[test]
    fn decimals_render_exactly() {
        assert_eq!(decimal_text(-1005, 2), "-10.05");
        assert_eq!(decimal_text(5, 4), "0.0005");
        assert_eq!(decimal_text(30_000_000, 2), "300000.00");
        assert_eq!(decimal_text(7, 0), "7");
    }

    #[test]
    fn load_data_text_escapes_and_marks_nulls() {
        let mut rows = RowBuffer::new(5);
        rows.int(-7);
        rows.decimal(5, 4);
        rows.text("a\tb\\c");
        rows.now();
        rows.null();
        rows.int(2);
        rows.decimal(-123_456, 2);
        rows.text("plain");
        rows.now();
        rows.null();
        let mut out = Vec::new();
        rows.load_data_text("2026-01-02 03:04:05", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "-7\t0.0005\ta\\tb\\\\c\t2026-01-02 03:04:05\t\\N\n\
             2\t-1234.56\tplain\t2026-01-02 03:04:05\t\\N\n"
        );
    }

    #[test]
    fn params_follow_the_values() {
        let mut rows = RowBuffer::new(5);
        rows.int(1);
        rows.decimal(250, 2);
        rows.text("abc");
        rows.now();
        rows.null();
        assert_eq!(rows.rows(), 1);
        let params = rows.params("2026-01-02 03:04:05");
        assert_eq!(
            params,
            [
                Param::Int(1),
                Param::Text("2.50"),
                Param::Text("abc"),
                Param::Text("2026-01-02 03:04:05"),
                Param::Null
            ]
        );
    }
}
