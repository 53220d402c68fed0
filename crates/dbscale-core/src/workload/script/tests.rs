//! The expression language against the examples and values of pgbench's documentation and its
//! own tests (PostgreSQL 16/17).

use std::collections::HashMap;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::eval::{evaluate, hash_fnv1a, hash_murmur2, Context};
use super::expr::parse;
use super::value::{EvalError, Value};

struct Vars {
    vars: HashMap<String, Value>,
    rng: SmallRng,
    printed: Vec<String>,
}

impl Context for Vars {
    fn variable(&mut self, name: &str) -> Result<Value, EvalError> {
        self.vars
            .get(name)
            .copied()
            .ok_or_else(|| EvalError(format!("undefined variable \"{name}\"")))
    }
    fn default_seed(&self) -> i64 {
        5432
    }
    fn rng(&mut self) -> &mut dyn rand::RngCore {
        &mut self.rng
    }
    fn debug(&mut self, line: &str) {
        self.printed.push(line.to_string());
    }
}

fn vars(pairs: &[(&str, Value)]) -> Vars {
    Vars {
        vars: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        rng: SmallRng::seed_from_u64(1),
        printed: Vec::new(),
    }
}

fn eval_in(text: &str, ctx: &mut Vars) -> Result<Value, EvalError> {
    let expr = parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    evaluate(&expr, ctx)
}

fn eval(text: &str) -> Value {
    eval_in(text, &mut vars(&[])).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn error(text: &str) -> String {
    eval_in(text, &mut vars(&[])).expect_err(text).0
}

#[test]
fn the_documentations_operator_examples() {
    use Value::{Bool, Double, Int};
    for (text, want) in [
        ("5 + 4", Int(9)),
        ("3 - 2.0", Double(1.0)),
        ("3 * 2", Int(6)),
        ("5 / 2", Int(2)),
        ("5.0 / 2", Double(2.5)),
        ("3 % 2", Int(1)),
        ("-2.0", Double(-2.0)),
        ("+2", Int(2)),
        ("1 < 2", Bool(true)),
        ("1 <= 2.0", Bool(true)),
        ("2 > 2", Bool(false)),
        ("3 >= 2.0", Bool(true)),
        ("5 = 4", Bool(false)),
        ("5 <> 4", Bool(true)),
        ("5 != 5", Bool(false)),
        ("1 & 3", Int(1)),
        ("1 | 2", Int(3)),
        ("1 # 3", Int(2)),
        ("~ 1", Int(-2)),
        ("1 << 2", Int(4)),
        ("8 >> 2", Int(2)),
        ("TRUE AND FALSE", Bool(false)),
        ("TRUE OR FALSE", Bool(true)),
        ("NOT FALSE", Bool(true)),
        ("2 * 3 + 4", Int(10)),
        ("2 * (3 + 4)", Int(14)),
        ("1 + 2 << 1", Int(6)),
        ("-9223372036854775808", Int(i64::MIN)),
        ("-5 % 3", Int(-2)),
        ("-9223372036854775808 % -1", Int(0)),
        ("-1.5E1", Double(-15.0)),
    ] {
        assert_eq!(eval(text), want, "{text}");
    }
}

#[test]
fn the_documentations_function_examples() {
    use Value::{Double, Int};
    for (text, want) in [
        ("abs(-17)", Int(17)),
        ("debug(5432.1)", Double(5432.1)),
        ("double(5432)", Double(5432.0)),
        ("exp(1.0)", Double(std::f64::consts::E)),
        ("greatest(5, 4, 3, 2)", Int(5)),
        ("int(5.4 + 3.8)", Int(9)),
        ("least(5, 4, 3, 2.1)", Double(2.1)),
        ("ln(2.718281828459045)", Double(1.0)),
        ("mod(54, 32)", Int(22)),
        ("pi()", Double(std::f64::consts::PI)),
        ("pow(2.0, 10)", Double(1024.0)),
        ("power(2.0, 10)", Double(1024.0)),
        ("sqrt(2.0)", Double(std::f64::consts::SQRT_2)),
        ("hash(10, 5432)", Int(-5817877081768721676)),
        ("hash_murmur2(10, 5432)", Int(-5817877081768721676)),
        ("hash_fnv1a(10, 5432)", Int(-7793829335365542153)),
        ("hash(10) = hash(10, 5432)", Value::Bool(true)), // the default seed
        ("int(2.5)", Int(2)),
        ("int(3.5)", Int(4)),
        ("int(-2.5)", Int(-2)),
    ] {
        assert_eq!(eval(text), want, "{text}");
    }
    assert_eq!(hash_fnv1a(10, 5432), -7793829335365542153);
    assert_eq!(hash_murmur2(10, 5432), -5817877081768721676);
}

#[test]
fn null_booleans_and_lazy_evaluation() {
    use Value::{Bool, Int, Null};
    let mut ctx = vars(&[
        ("n", Null),
        ("t", Bool(true)),
        ("f", Bool(false)),
        ("zy", Int(0)),
        ("d1", Value::Double(1.5)),
    ]); // fmt: skip
    for (text, want) in [
        ("NULL + NULL * exp(NULL)", Null), (":n IS NULL", Bool(true)),
        ("NOT (:n IS NOT NULL OR :d1 IS NULL)", Bool(true)),
        (":n IS NULL AND :d1 IS NOT NULL AND :d1 NOTNULL", Bool(true)),
        (":n ISNULL AND NOT :t IS FALSE AND :t IS NOT FALSE", Bool(true)),
        ("CASE WHEN :n IS NULL THEN 46 ELSE NULL END", Int(46)),
        (":n IS NULL AND NOT :f AND :t", Bool(true)),
        ("CASE WHEN 1 THEN TRUE END AND CASE WHEN 1.0 THEN TRUE END AND CASE WHEN :n THEN NULL ELSE TRUE END", Bool(true)),
        ("case when :zy = 0 then -1 else (1 / :zy) end", Int(-1)),
        ("case when :zy = 0 or (1 / :zy) < 0 then -1 else (1 / :zy) end", Int(-1)),
        ("case when :zy > 0 and (1 / :zy) < 0 then (1 / :zy) else 1 end", Int(1)),
        ("NULL AND TRUE", Null), ("FALSE AND NULL", Bool(false)), ("TRUE OR NULL", Bool(true)),
        ("CASE WHEN FALSE THEN 1 END", Null), ("debug(NULL)", Null),
    ] {
        assert_eq!(eval_in(text, &mut ctx).unwrap(), want, "{text}");
    }
    assert_eq!(ctx.printed, ["null"]);
}

#[test]
fn run_time_errors_in_pgbenchs_words() {
    for (text, want) in [
        ("1 / 0", "division by zero"),
        ("1 % 0", "division by zero"),
        ("9223372036854775807 + 1", "bigint add out of range"),
        ("-9223372036854775808 - 1", "bigint sub out of range"),
        ("9223372036854775807 * 2", "bigint mul out of range"),
        ("-9223372036854775808 / -1", "bigint div out of range"),
        (
            "int(1.0E19)",
            "double to int overflow for 10000000000000000000.000000",
        ),
        ("1 + TRUE", "cannot coerce boolean to int"),
        ("(1 < 2) = TRUE", "cannot coerce boolean to int"),
        ("NOT 1", "cannot coerce int to boolean"),
        ("1 AND TRUE", "cannot coerce int to boolean"),
        ("random(2, 1)", "empty range given to random"),
        (
            "random(-9223372036854775808, 9223372036854775807)",
            "random range is too large",
        ),
        (
            "random_exponential(1, 10, 0)",
            "exponential parameter must be greater than zero (not 0.000000)",
        ),
        (
            "random_gaussian(1, 10, 1.5)",
            "gaussian parameter must be at least 2.000000 (not 1.500000)",
        ),
        (
            "random_zipfian(1, 10, 0.5)",
            "zipfian parameter must be in range [1.001, 1000] (not 0.500000)",
        ),
        (":nope + 1", "undefined variable \"nope\""),
    ] {
        assert_eq!(error(text), want, "{text}");
    }
}

#[test]
fn parse_errors_name_the_column() {
    for (text, message, column) in [
        ("1 +", "syntax error", 3),
        ("foo(1)", "unexpected function name (foo)", 0),
        ("abs(1, 2)", "unexpected number of arguments (abs)", 0),
        ("1 < 2 < 3", "syntax error", 6),
        ("(1 + 2", "syntax error", 6),
        ("9223372036854775808", "syntax error", 0),
        (
            "9223372036854775809",
            "bigint constant overflow (9223372036854775809)",
            0,
        ),
        ("1.0E309", "double constant overflow (1.0E309)", 0),
        ("least()", "at least one argument expected (least)", 0),
        (": + 1", "unexpected character (:)", 0),
        ("1 2", "syntax error", 2),
        ("1 @ 2", "unexpected character (@)", 2),
        ("1 IS 2", "syntax error", 5),
    ] {
        let got = parse(text).expect_err(text);
        assert_eq!(
            (got.message.as_str(), got.column),
            (message, column),
            "{text}"
        );
    }
}

/// Draws of `text` (a random function of 1..100).
fn draws(text: &str, n: usize) -> Vec<i64> {
    let expr = parse(text).unwrap();
    let mut ctx = vars(&[]);
    (0..n)
        .map(|_| match evaluate(&expr, &mut ctx).unwrap() {
            Value::Int(i) => i,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn random_functions_follow_pgbenchs_distributions() {
    let n = 200_000;
    let mean = |v: &[i64]| v.iter().sum::<i64>() as f64 / v.len() as f64;
    let uniform = draws("random(1, 100)", n);
    assert!(uniform.iter().all(|x| (1..=100).contains(x)));
    assert!((mean(&uniform) - 50.5).abs() < 0.3, "{}", mean(&uniform));
    // Exponential cut at 5: the documentation's 1 - exp(-5)-scaled shape; mean of the offset
    // is 1/p - e^-p/(1 - e^-p) over the unit interval, times 100.
    let exponential = draws("random_exponential(1, 100, 5.0)", n);
    let p: f64 = 5.0;
    let expected = 1.0 + 100.0 * (1.0 / p - (-p).exp() / (1.0 - (-p).exp())) - 0.5;
    assert!(
        (mean(&exponential) - expected).abs() < 0.3,
        "{} vs {expected}",
        mean(&exponential)
    );
    // The documentation: with parameter 5, about 67% of draws are within 1/5 of the middle.
    let gaussian = draws("random_gaussian(1, 100, 5.0)", n);
    let central = gaussian.iter().filter(|x| (41..=60).contains(*x)).count() as f64 / n as f64;
    assert!((central - 0.683).abs() < 0.01, "{central}");
    assert!((mean(&gaussian) - 50.5).abs() < 0.3);
    // Zipfian s=2: rank k has weight 1/k^2 over 1..100.
    let zipf = draws("random_zipfian(1, 100, 2.0)", n);
    let weights: f64 = (1..=100).map(|k| 1.0 / (k as f64).powi(2)).sum();
    let ones = zipf.iter().filter(|x| **x == 1).count() as f64 / n as f64;
    assert!(
        (ones - 1.0 / weights).abs() < 0.01,
        "{ones} vs {}",
        1.0 / weights
    );
    assert!(zipf.iter().all(|x| (1..=100).contains(x)));
}

#[test]
fn the_tallest_and_deepest_expressions_allowed_evaluate_on_a_small_stack() {
    let chain = format!("1{}", " + 1".repeat(500));
    let nested = format!("{}1{}", "abs(".repeat(63), ")".repeat(63));
    let run = move || (eval(&chain), eval(&nested));
    // An engine thread's stack (std's default), not the test runner's.
    let (sum, one) = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(sum, Value::Int(501));
    assert_eq!(one, Value::Int(1));
}
