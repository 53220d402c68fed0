//! Script files as pgbench reads them: commands split where pgbench splits them, meta-commands
//! checked, conditionals matched, and errors placed by file, line and column.

use super::model::{Op, SqlPart, Store, Word};
use super::parse::{parse_script, sql_parts, ScriptError};

fn ops(text: &str) -> Vec<Op> {
    parse_script("t.sql", text)
        .unwrap()
        .commands
        .into_iter()
        .map(|c| c.op)
        .collect()
}

fn error(text: &str) -> ScriptError {
    parse_script("t.sql", text).unwrap_err()
}

fn sql_text(op: &Op) -> (String, usize) {
    let Op::Sql(sql) = op else {
        panic!("not SQL: {op:?}")
    };
    let text = sql
        .parts
        .iter()
        .map(|p| match p {
            SqlPart::Text(t) => t.clone(),
            SqlPart::Var(v) => format!("<{v}>"),
            SqlPart::Literal(v) => format!("<'{v}'>"),
            SqlPart::Identifier(v) => format!("<\"{v}\">"),
        })
        .collect();
    (text, sql.statements)
}

#[test]
fn sql_commands_end_at_semicolons_outside_quotes_and_comments() {
    let ops = ops(
        "SELECT ';', \"a;b\", $$x;y$$, $t$;$t$ -- c;\n  FROM t /* ; /* ; */ */;\n\n\
                   UPDATE t\n  SET a = 1\n  WHERE b = 2;\nSELECT E'\\';' ;\nSELECT 3",
    );
    assert_eq!(ops.len(), 4);
    assert_eq!(
        sql_text(&ops[0]).0,
        "SELECT ';', \"a;b\", $$x;y$$, $t$;$t$ -- c;\n  FROM t /* ; /* ; */ */;"
    );
    assert_eq!(sql_text(&ops[1]).0, "UPDATE t\n  SET a = 1\n  WHERE b = 2;");
    assert_eq!(sql_text(&ops[2]).0, "SELECT E'\\';' ;");
    assert_eq!(sql_text(&ops[3]).0, "SELECT 3");
}

#[test]
fn backslash_semicolon_joins_statements_into_one_command() {
    let ops = ops("SELECT 1 \\; SELECT 2 \\;\nSELECT 3;");
    assert_eq!(ops.len(), 1);
    assert_eq!(
        sql_text(&ops[0]),
        ("SELECT 1 ; SELECT 2 ;\nSELECT 3;".into(), 3)
    );
}

#[test]
fn variables_in_sql_as_pgbench_finds_them() {
    let parts = sql_parts("SELECT :a::int, :'b', :\"c\", '12:30', ::x, :1, a:b_2");
    assert_eq!(
        parts,
        vec![
            SqlPart::Text("SELECT ".into()),
            SqlPart::Var("a".into()),
            SqlPart::Text("::int, ".into()),
            SqlPart::Literal("b".into()),
            SqlPart::Text(", ".into()),
            SqlPart::Identifier("c".into()),
            SqlPart::Text(", '12:30', ::x, :1, a".into()),
            SqlPart::Var("b_2".into()),
        ]
    );
}

#[test]
fn gset_and_aset_end_the_sql_before_them() {
    let ops = ops("SELECT 1 AS one \\gset\nSELECT 2 AS two \\; SELECT 3 AS three \\aset p_\n");
    assert_eq!(ops.len(), 2);
    let Op::Sql(first) = &ops[0] else { panic!() };
    assert_eq!(
        first.store,
        Some(Store {
            all: false,
            prefix: String::new()
        })
    );
    let Op::Sql(second) = &ops[1] else { panic!() };
    assert_eq!(second.statements, 2);
    assert_eq!(
        second.store,
        Some(Store {
            all: true,
            prefix: "p_".into()
        })
    );
}

#[test]
fn meta_commands_and_their_arguments() {
    let ops = ops(
        "\\set x 1 + \\\n 2\n\\sleep 10 ms\n\\sleep :t\n\\setshell v echo ::a :b\n\\shell true\n",
    );
    let Op::Set { var, .. } = &ops[0] else {
        panic!()
    };
    assert_eq!(var, "x");
    assert!(matches!(&ops[1], Op::Sleep { amount: Word::Text(t), unit_us: 1000 } if t == "10"));
    assert!(matches!(&ops[2], Op::Sleep { amount: Word::Var(v), unit_us: 1_000_000 } if v == "t"));
    let Op::Shell { var, words } = &ops[3] else {
        panic!()
    };
    assert_eq!(var.as_deref(), Some("v"));
    assert_eq!(
        words,
        &vec![
            Word::Text("echo".into()),
            Word::Text(":a".into()),
            Word::Var("b".into())
        ]
    );
    assert!(matches!(&ops[4], Op::Shell { var: None, .. }));
}

#[test]
fn pipeline_commands() {
    let ops = ops("\\startpipeline\nSELECT 1;\n\\syncpipeline\nSELECT 2;\n\\endpipeline\n");
    assert!(matches!(ops[0], Op::StartPipeline));
    assert!(matches!(ops[2], Op::SyncPipeline));
    assert!(matches!(ops[4], Op::EndPipeline));
}

#[test]
fn conditionals_jump_to_their_next_branch_and_end() {
    // 0 if, 1 sql, 2 elif, 3 sql, 4 else, 5 sql, 6 endif, 7 sql
    let ops = ops("\\if 1\nSELECT 1;\n\\elif 2\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;");
    assert!(matches!(ops[0], Op::If { on_false: 2, .. }));
    assert!(matches!(
        ops[2],
        Op::Elif {
            on_false: 4,
            end: 6,
            ..
        }
    ));
    assert!(matches!(ops[4], Op::Else { end: 6 }));
    assert!(matches!(ops[6], Op::Endif));
    // Nested, and without an else: a false condition goes to the endif.
    let ops = self::ops("\\if 1\n\\if 0\nSELECT 1;\n\\endif\nSELECT 2;\n\\endif\n");
    assert!(matches!(ops[0], Op::If { on_false: 5, .. }));
    assert!(matches!(ops[1], Op::If { on_false: 3, .. }));
}

#[test]
fn errors_name_file_line_and_column_in_pgbenchs_words() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT 1;\n\\foo bar",
            2,
            1,
            "invalid command in command \"foo\"",
        ),
        ("\\set", 1, 1, "missing argument in command \"set\""),
        ("\\set x", 1, 7, "syntax error in command \"set\""),
        ("\\if", 1, 4, "syntax error in command \"if\""),
        (
            "\\sleep 1 min",
            1,
            1,
            "unrecognized time unit, must be us, ms or s (min) in command \"sleep\"",
        ),
        (
            "\\sleep x",
            1,
            1,
            "invalid sleep time, must be an integer (x) in command \"sleep\"",
        ),
        (
            "\\sleep 1 s s",
            1,
            1,
            "too many arguments in command \"sleep\"",
        ),
        (
            "\\else",
            1,
            1,
            "condition error: \\else without matching \\if",
        ),
        (
            "\\endif",
            1,
            1,
            "condition error: \\endif without matching \\if",
        ),
        (
            "\\elif 1",
            1,
            1,
            "condition error: \\elif without matching \\if",
        ),
        (
            "\\if 1\n\\else\n\\else\n\\endif",
            3,
            1,
            "condition error: \\else after \\else",
        ),
        (
            "\\if 1\n\\else\n\\elif 2\n\\endif",
            3,
            1,
            "condition error: \\elif after \\else",
        ),
        (
            "SELECT 1;\n  \\if 1\nSELECT 2;",
            2,
            3,
            "condition error: \\if without matching \\endif",
        ),
        (
            "\\gset",
            1,
            1,
            "\\gset must follow an SQL command in command \"gset\"",
        ),
        (
            "\\set x 1\n\\aset",
            2,
            1,
            "\\aset must follow an SQL command (\\set x 1) in command \"aset\"",
        ),
        (
            "SELECT 1 \\gset a b",
            1,
            10,
            "too many arguments in command \"gset\"",
        ),
        (
            "\\setshell x",
            1,
            1,
            "missing argument in command \"setshell\"",
        ),
        ("\\shell", 1, 1, "missing command in command \"shell\""),
        (
            "\\startpipeline now",
            1,
            1,
            "unexpected argument in command \"startpipeline\"",
        ),
        (
            "-- nothing\n\n",
            1,
            1,
            "empty command list for script \"t.sql\"",
        ),
    ];
    for (text, line, column, message) in cases {
        let e = error(text);
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (*line, *column, *message),
            "{text:?}"
        );
    }
    // An expression's error points into the expression.
    let e = error("SELECT 1;\n\\set x 1 + * 2");
    assert_eq!((e.line, e.column), (2, 12), "{e}");
    assert_eq!(e.to_string(), format!("t.sql:2: {} (column 12)", e.message));
}

#[test]
fn hostile_nesting_and_length_are_errors_not_crashes() {
    for (shape, open, close) in [
        ("parens", "(", ")"),
        ("calls", "abs(", ")"),
        ("unary", "-", ""),
    ] {
        let deep = format!("\\set x {}1{}\n", open.repeat(5_000), close.repeat(5_000));
        let e = error(&deep);
        assert!(e.message.contains("nested too deeply"), "{shape}: {e}");
        assert_eq!((e.file.as_str(), e.line), ("t.sql", 1), "{shape}");
    }
    let not_chain = format!("\\if {}true\n\\endif\n", "not ".repeat(5_000));
    assert!(error(&not_chain).message.contains("nested too deeply"));
    let long = format!("\\set x 1{}\n", " + 1".repeat(5_000));
    assert!(
        error(&long).message.contains("too long"),
        "{}",
        error(&long)
    );
    // Deep but within bounds: parsed as written.
    let fine = format!("\\set x {}1{}\n", "(".repeat(60), ")".repeat(60));
    assert_eq!(ops(&fine).len(), 1);
    let chain = format!("\\set x 1{}\n", " + 1".repeat(450));
    assert_eq!(ops(&chain).len(), 1);
}

#[test]
fn a_script_over_the_size_bound_is_refused_before_parsing() {
    let huge = "SELECT 1;\n".repeat((super::parse::MAX_SCRIPT_BYTES / 10) + 1);
    let e = error(&huge);
    assert!(e.message.contains("over 1 MiB"), "{e}");
}

#[test]
fn sleep_takes_its_unit_glued_to_the_number_as_pgbench_does() {
    let ops = ops("\\sleep 2ms\n\\sleep -5us\n\\sleep 3 s\n\\sleep 7\n");
    let slept: Vec<(String, u64)> = ops
        .iter()
        .map(|op| match op {
            Op::Sleep {
                amount: Word::Text(t),
                unit_us,
            } => (t.clone(), *unit_us),
            other => panic!("{other:?}"),
        })
        .collect();
    let want = [("2", 1_000), ("-5", 1), ("3", 1_000_000), ("7", 1_000_000)];
    assert_eq!(slept, want.map(|(t, u)| (t.to_string(), u)).to_vec());
    assert_eq!(
        error("\\sleep ms\n").message,
        "invalid sleep time, must be an integer (ms) in command \"sleep\""
    );
    assert_eq!(
        error("\\sleep 2xs\n").message,
        "unrecognized time unit, must be us, ms or s (xs) in command \"sleep\""
    );
    assert_eq!(
        error("\\sleep 2ms s\n").message,
        "invalid sleep time, must be an integer (2ms) in command \"sleep\""
    );
}
