//! pgbench's built-in scripts as script text, so a mix such as `script:mine.sql@3 tpcb@1` runs
//! them as pgbench's `-b tpcb-like@1` does: through the same interpreter as the user's files.

/// The start both TPC-B scripts share: the random values, BEGIN, the account's update and read.
macro_rules! tpcb_start {
    () => {
        r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
"
    };
}

/// The end both share: the history row and END.
macro_rules! tpcb_end {
    () => {
        r"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"
    };
}

const TPCB_LIKE: &str = concat!(
    tpcb_start!(),
    r"UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
",
    tpcb_end!()
);

const SIMPLE_UPDATE: &str = concat!(tpcb_start!(), tpcb_end!());

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtins_are_pgbenchs_scripts() {
        let lines = |name: &str| builtin(name).unwrap().1.lines().count();
        assert_eq!(
            (
                lines("tpcb-like"),
                lines("simple-update"),
                lines("select-only")
            ),
            (11, 9, 2)
        );
        let (name, text) = builtin("pgbench").unwrap();
        assert_eq!(name, "tpcb");
        assert!(text.contains("UPDATE pgbench_tellers") && text.ends_with("END;\n"));
        assert!(!builtin("tpcb-simple-update")
            .unwrap()
            .1
            .contains("pgbench_tellers"));
        assert!(builtin("nosuch").is_none());
    }
}
