//! What the scripted servers answer: by the statement's first words, what pgbench's and
//! sysbench's tables would give (a branch count, a balance, a 120-character `c`), so the client
//! parses answers of the real sizes.

/// A statement's answer: rows (with their column names) or a command tag.
pub enum Answer {
    Rows {
        columns: &'static [&'static str],
        rows: Vec<Vec<String>>,
    },
    Done(&'static str),
}

/// sysbench's `c`: ten groups of eleven digits, dash-separated.
const C_VALUE: &str = "68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441";

pub fn answer(sql: &str) -> Answer {
    let text = sql.trim().to_ascii_lowercase();
    let one = |column: &'static [&'static str], value: &str| Answer::Rows {
        columns: column,
        rows: vec![vec![value.to_string()]],
    };
    if text.starts_with("select count(*) from pgbench_branches") {
        return one(&["count"], "1");
    }
    if text.starts_with("select aid from pgbench_accounts") {
        return one(&["aid"], "1");
    }
    if text.starts_with("select abalance") {
        return one(&["abalance"], "-2718");
    }
    if text.starts_with("select c from sbtest") {
        return one(&["c"], C_VALUE);
    }
    if text.starts_with("select id from sbtest") {
        return Answer::Rows {
            columns: &["id"],
            rows: Vec::new(),
        };
    }
    if text.contains("max_connections") {
        return one(&["max_connections"], "1000");
    }
    if text.starts_with("select") || text.starts_with("show") {
        return one(&["value"], "1");
    }
    let tag = match text.split_whitespace().next().unwrap_or("") {
        "update" => "UPDATE 1",
        "insert" => "INSERT 0 1",
        "delete" => "DELETE 1",
        "begin" | "start" => "BEGIN",
        "end" | "commit" => "COMMIT",
        "vacuum" => "VACUUM",
        "truncate" => "TRUNCATE TABLE",
        "set" => "SET",
        _ => "OK",
    };
    Answer::Done(tag)
}
