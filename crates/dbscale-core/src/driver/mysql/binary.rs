//! Rows of the binary protocol (COM_STMT_EXECUTE results) turned into the text the text protocol
//! would have sent; only `fetch` needs this, `execute` counts rows without decoding them.

use super::wire::Reader;

/// Column type and the UNSIGNED flag, from a column definition packet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Column {
    pub kind: u8,
    pub unsigned: bool,
}

/// A column definition's `name` (what the statement called it).
pub(super) fn column_name(payload: &[u8]) -> String {
    let mut r = Reader::new(payload);
    for _ in 0..4 {
        r.lenenc_bytes(); // catalog, schema, table, org_table
    }
    String::from_utf8_lossy(r.lenenc_bytes().unwrap_or_default()).into_owned()
}

impl Column {
    pub(super) fn parse(payload: &[u8]) -> Column {
        let mut r = Reader::new(payload);
        for _ in 0..6 {
            r.lenenc_bytes(); // catalog, schema, table, org_table, name, org_name
        }
        r.lenenc_int(); // length of the fixed fields
        r.uint(2); // character set
        r.uint(4); // column length
        let kind = r.u8();
        let flags = r.uint(2);
        Column {
            kind,
            unsigned: flags & 0x20 != 0,
        }
    }
}

/// Decodes one binary row (after its 0x00 header byte).
pub(super) fn row_as_text(columns: &[Column], payload: &[u8]) -> Vec<Option<String>> {
    let mut r = Reader::new(payload.get(1..).unwrap_or_default());
    let bitmap = r.take((columns.len() + 9) / 8);
    columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let bit = i + 2;
            let null = bitmap
                .get(bit / 8)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0);
            (!null).then(|| value_as_text(*column, &mut r))
        })
        .collect()
}

fn value_as_text(column: Column, r: &mut Reader<'_>) -> String {
    let int = |r: &mut Reader<'_>, n: usize| {
        let v = r.uint(n);
        if column.unsigned {
            v.to_string()
        } else {
            let shift = 64 - 8 * n as u32;
            (((v << shift) as i64) >> shift).to_string()
        }
    };
    match column.kind {
        1 => int(r, 1),
        2 | 13 => int(r, 2),
        3 | 9 => int(r, 4),
        8 => int(r, 8),
        4 => f32::from_bits(r.uint(4) as u32).to_string(),
        5 => f64::from_bits(r.uint(8)).to_string(),
        7 | 10 | 12 => {
            let n = usize::from(r.u8());
            let mut d = Reader::new(r.take(n));
            let (y, mo, day) = (d.uint(2), d.u8(), d.u8());
            let mut t = format!("{y:04}-{mo:02}-{day:02}");
            if column.kind != 10 {
                let (h, mi, s, us) = (d.u8(), d.u8(), d.u8(), d.uint(4));
                t.push_str(&format!(" {h:02}:{mi:02}:{s:02}"));
                if us > 0 {
                    t.push_str(&format!(".{us:06}"));
                }
            }
            t
        }
        11 => {
            let n = usize::from(r.u8());
            let mut d = Reader::new(r.take(n));
            let (negative, days, h, mi, s, us) =
                (d.u8() == 1, d.uint(4), d.u8(), d.u8(), d.u8(), d.uint(4));
            let sign = if negative { "-" } else { "" };
            let mut t = format!("{sign}{:02}:{mi:02}:{s:02}", days * 24 + u64::from(h));
            if us > 0 {
                t.push_str(&format!(".{us:06}"));
            }
            t
        }
        6 => String::new(),
        // Strings, blobs, DECIMAL, JSON, BIT, ENUM, SET, GEOMETRY: length-encoded bytes.
        _ => String::from_utf8_lossy(r.lenenc_bytes().unwrap_or_default()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_values_read_as_text() {
        let columns = [
            Column {
                kind: 8,
                unsigned: false,
            },
            Column {
                kind: 253,
                unsigned: false,
            },
            Column {
                kind: 5,
                unsigned: false,
            },
            Column {
                kind: 12,
                unsigned: false,
            },
        ];
        let mut row = vec![0x00, 0b0001_1000]; // header; the bitmap marks columns 1 and 2 NULL
        row.extend_from_slice(&(-5i64).to_le_bytes());
        row.extend_from_slice(&[7, 0xE8, 0x07, 2, 3, 4, 5, 6]); // 2024-02-03 04:05:06
        let decoded = row_as_text(&columns, &row);
        assert_eq!(decoded[0].as_deref(), Some("-5"));
        assert_eq!(decoded[1], None);
        assert_eq!(decoded[2], None);
        assert_eq!(decoded[3].as_deref(), Some("2024-02-03 04:05:06"));
    }
}
