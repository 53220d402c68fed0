//! CommandComplete tags (`INSERT 0 5`, `UPDATE 3`, `SELECT 1`, …): how many rows a statement
//! changed, and whether it was a query. Parsed in place from the receive buffer.

/// What a tag says about its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct CommandTag {
    /// Rows inserted, updated, deleted, merged or copied; 0 for everything else.
    pub rows_affected: u64,
    /// The statement was a query (it has a result set, possibly empty).
    pub returns_rows: bool,
}

impl CommandTag {
    /// `tag` is the CommandComplete body without its terminating NUL.
    pub(super) fn parse(tag: &[u8]) -> CommandTag {
        let verb_end = tag.iter().position(|&b| b == b' ').unwrap_or(tag.len());
        match &tag[..verb_end] {
            b"INSERT" | b"UPDATE" | b"DELETE" | b"MERGE" | b"COPY" => CommandTag {
                // The count is always the last word (`INSERT oid count`).
                rows_affected: parse_u64(last_word(&tag[verb_end..])),
                returns_rows: false,
            },
            b"SELECT" | b"FETCH" | b"SHOW" | b"EXPLAIN" | b"VALUES" | b"TABLE" => CommandTag {
                rows_affected: 0,
                returns_rows: true,
            },
            _ => CommandTag::default(),
        }
    }
}

/// What follows the last space (empty when there is none).
fn last_word(rest: &[u8]) -> &[u8] {
    match rest.iter().rposition(|&b| b == b' ') {
        Some(space) => &rest[space + 1..],
        None => &[],
    }
}

fn parse_u64(digits: &[u8]) -> u64 {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    digits.iter().fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tag: &str) -> (u64, bool) {
        let t = CommandTag::parse(tag.as_bytes());
        (t.rows_affected, t.returns_rows)
    }

    #[test]
    fn dml_counts() {
        assert_eq!(parse("INSERT 0 5"), (5, false));
        assert_eq!(parse("UPDATE 3"), (3, false));
        assert_eq!(parse("DELETE 0"), (0, false));
        assert_eq!(parse("MERGE 2"), (2, false));
        assert_eq!(parse("COPY 1000000"), (1_000_000, false));
    }

    #[test]
    fn queries() {
        assert_eq!(parse("SELECT 0"), (0, true));
        assert_eq!(parse("SELECT 12"), (0, true));
        assert_eq!(parse("FETCH 4"), (0, true));
        assert_eq!(parse("SHOW"), (0, true));
    }

    #[test]
    fn utility_and_odd_tags() {
        assert_eq!(parse("BEGIN"), (0, false));
        assert_eq!(parse("CREATE TABLE"), (0, false));
        assert_eq!(parse("MOVE 3"), (0, false));
        assert_eq!(parse(""), (0, false));
        assert_eq!(parse("UPDATE"), (0, false));
        assert_eq!(parse("UPDATE x"), (0, false));
        assert_eq!(parse("UPDATE 99999999999999999999999"), (u64::MAX, false));
    }
}
