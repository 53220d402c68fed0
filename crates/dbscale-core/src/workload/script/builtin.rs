//! pgbench's built-in scripts as script text, so a mix such as `script:mine.sql@3 tpcb@1` runs
//! them as pgbench's `-b tpcb-like@1` does: through the same interpreter as the user's files.

const TPCB_LIKE: &str = r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SIMPLE_UPDATE: &str = r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SELECT_ONLY: &str = r"\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";

/// dbscale's names of the TPC-B workloads and pgbench's `-b` names, with their scripts.
const BUILTINS: &[(&[&str], &str)] = &[
    (&["tpcb", "tpcb-like", "pgbench"], TPCB_LIKE),
    (&["tpcb-simple-update", "simple-update"], SIMPLE_UPDATE),
    (&["tpcb-select-only", "select-only"], SELECT_ONLY),
];

/// The script of built-in `name` (dbscale's or pgbench's name), and its canonical name.
pub fn builtin(name: &str) -> Option<(&'static str, &'static str)> {
    BUILTINS
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(names, text)| (names[0], *text))
}

/// Every built-in's names, for error messages.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(names, _)| names[0]).collect()
}
