//! The expression language of pgbench's `\set` and `\if`: a lexer and a precedence-climbing
//! parser with pgbench's precedence (lowest first): OR; AND; NOT; IS, ISNULL, NOTNULL;
//! comparisons; `| # & << >>`; `+ -`; `* / %`; unary `+ - ~`. Comparisons and IS do not chain.
//! `a > b` is `b < a`, `-x` is `0 - x`, `~x` is `-1 # x`, `x IS NOT NULL` is `NOT (x IS NULL)`,
//! as pgbench builds them, so evaluation has fewer cases.

pub use super::lex::ParseError;
use super::lex::{error, lex, Tok};
use super::value::Value;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Value),
    Var(String),
    Call(Func, Vec<Expr>),
}

impl Expr {
    /// The tree's height (a leaf is 1). Recursive: only called on trees whose parts were
    /// checked as they were built, so never deeper than `MAX_HEIGHT` + 1.
    fn height(&self) -> usize {
        match self {
            Expr::Call(_, args) => 1 + args.iter().map(Expr::height).max().unwrap_or(0),
            _ => 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Le,
    Lt,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    And,
    Or,
    Not,
    Is,
    Case,
    Abs,
    Debug,
    Double,
    Exp,
    Greatest,
    Hash,
    HashFnv1a,
    HashMurmur2,
    Int,
    Least,
    Ln,
    ModFn,
    Permute,
    Pi,
    Pow,
    Random,
    RandomExponential,
    RandomGaussian,
    RandomZipfian,
    Sqrt,
}

/// Functions callable by name: (name, function, fewest and most arguments).
const FUNCTIONS: &[(&str, Func, usize, usize)] = &[
    ("abs", Func::Abs, 1, 1),
    ("debug", Func::Debug, 1, 1),
    ("double", Func::Double, 1, 1),
    ("exp", Func::Exp, 1, 1),
    ("greatest", Func::Greatest, 1, usize::MAX),
    ("hash", Func::Hash, 1, 2),
    ("hash_fnv1a", Func::HashFnv1a, 1, 2),
    ("hash_murmur2", Func::HashMurmur2, 1, 2),
    ("int", Func::Int, 1, 1),
    ("least", Func::Least, 1, usize::MAX),
    ("ln", Func::Ln, 1, 1),
    ("mod", Func::ModFn, 2, 2),
    ("permute", Func::Permute, 2, 3),
    ("pi", Func::Pi, 0, 0),
    ("pow", Func::Pow, 2, 2),
    ("power", Func::Pow, 2, 2),
    ("random", Func::Random, 2, 2),
    ("random_exponential", Func::RandomExponential, 3, 3),
    ("random_gaussian", Func::RandomGaussian, 3, 3),
    ("random_zipfian", Func::RandomZipfian, 3, 3),
    ("sqrt", Func::Sqrt, 1, 1),
];

/// Parses one expression (the rest of a `\set` line).
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    let mut parser = Parser {
        toks: lex(text)?,
        at: 0,
        depth: 0,
    };
    let expr = parser.expr(0)?;
    match parser.peek() {
        Tok::End => Ok(expr),
        _ => Err(parser.unexpected()),
    }
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    at: usize,
    /// How deep the parse is nested (parentheses, calls, unary operators, NOT).
    depth: usize,
}

/// The deepest nesting (parentheses, calls, unary operators) and the tallest tree an expression
/// may have: the parser and the evaluator recurse over it, and a hostile script must get an
/// error, not a stack overflow.
pub const MAX_NESTING: usize = 64;
pub const MAX_HEIGHT: usize = 512;

/// Binary operators by precedence level (0 lowest); comparisons (3) do not chain.
const LEVELS: &[&[&str]] = &[
    &["or"],
    &["and"],
    &[],
    &["=", "<>", "!=", "<", ">", "<=", ">="],
    &["|", "#", "&", "<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];
const NOT_LEVEL: usize = 2;
const COMPARE_LEVEL: usize = 3;
/// Unary `~` binds as the bitwise operators do (looser than `+` and `*`): `~ 1 + 2` is `~(1 + 2)`.
const BITWISE_LEVEL: usize = 4;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].0
    }

    fn column(&self) -> usize {
        self.toks[self.at].1
    }

    fn next(&mut self) -> Tok {
        let tok = self.toks[self.at].0.clone();
        self.at = (self.at + 1).min(self.toks.len() - 1);
        tok
    }

    /// pgbench's grammar reports every misplaced token, the end included, as bison does.
    fn unexpected(&self) -> ParseError {
        error("syntax error", self.column())
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Word(w) if w == word)
    }

    fn expect_op(&mut self, op: &str) -> Result<(), ParseError> {
        match self.peek() {
            Tok::Op(o) if *o == op => {
                self.next();
                Ok(())
            }
            _ => Err(self.unexpected()),
        }
    }

    fn expect_word(&mut self, word: &str) -> Result<(), ParseError> {
        if self.is_word(word) {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// Runs `parse` one level deeper, refusing nesting past `MAX_NESTING`.
    fn nested<T>(
        &mut self,
        parse: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(error(
                &format!("expression nested too deeply (over {MAX_NESTING} levels)"),
                self.column(),
            ));
        }
        self.depth += 1;
        let parsed = parse(self);
        self.depth -= 1;
        parsed
    }

    /// `expr`, unless its tree is taller than `MAX_HEIGHT`.
    fn bounded(&self, expr: Expr) -> Result<Expr, ParseError> {
        if expr.height() > MAX_HEIGHT {
            return Err(error(
                &format!("expression too long or nested too deeply (over {MAX_HEIGHT} levels)"),
                self.column(),
            ));
        }
        Ok(expr)
    }

    /// Operators of `level` and above.
    fn expr(&mut self, level: usize) -> Result<Expr, ParseError> {
        if level == NOT_LEVEL {
            if self.is_word("not") {
                self.next();
                let negated = self.nested(|p| p.expr(NOT_LEVEL))?;
                return Ok(Expr::Call(Func::Not, vec![negated]));
            }
            return self.is_expr();
        }
        if level >= LEVELS.len() {
            return self.unary();
        }
        let mut left = self.expr(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Op(o) if LEVELS[level].contains(o) => *o,
                Tok::Word(w) if LEVELS[level].contains(&w.as_str()) => {
                    if w == "or" {
                        "or"
                    } else {
                        "and"
                    }
                }
                _ => return Ok(left),
            };
            self.next();
            let right = self.expr(level + 1)?;
            left = self.bounded(binary(op, left, right))?;
            if level == COMPARE_LEVEL {
                if let Tok::Op(o) = self.peek() {
                    if LEVELS[COMPARE_LEVEL].contains(o) {
                        return Err(error("syntax error", self.column()));
                    }
                }
                return Ok(left);
            }
        }
    }

    /// `x IS [NOT] NULL|TRUE|FALSE`, `x ISNULL`, `x NOTNULL` (non-associative).
    fn is_expr(&mut self) -> Result<Expr, ParseError> {
        let left = self.expr(COMPARE_LEVEL)?;
        let is = |e: Expr, v: Value| Expr::Call(Func::Is, vec![e, Expr::Const(v)]);
        let not = |e: Expr| Expr::Call(Func::Not, vec![e]);
        if self.is_word("isnull") {
            self.next();
            return Ok(is(left, Value::Null));
        }
        if self.is_word("notnull") {
            self.next();
            return Ok(not(is(left, Value::Null)));
        }
        if !self.is_word("is") {
            return Ok(left);
        }
        self.next();
        let negated = self.is_word("not");
        if negated {
            self.next();
        }
        let value = match self.next() {
            Tok::Null => Value::Null,
            Tok::Bool(b) => Value::Bool(b),
            _ => return Err(error("syntax error", self.toks[self.at - 1].1)),
        };
        let test = is(left, value);
        Ok(if negated { not(test) } else { test })
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        let expr = self.nested(Self::unary_here)?;
        self.bounded(expr)
    }

    fn unary_here(&mut self) -> Result<Expr, ParseError> {
        match self.peek().clone() {
            Tok::Op("+") => {
                self.next();
                self.unary()
            }
            Tok::Op("-") => {
                self.next();
                if *self.peek() == Tok::MaxIntPlusOne {
                    self.next();
                    return Ok(Expr::Const(Value::Int(i64::MIN)));
                }
                Ok(binary("-", Expr::Const(Value::Int(0)), self.unary()?))
            }
            Tok::Op("~") => {
                self.next();
                let operand = self.expr(BITWISE_LEVEL + 1)?;
                Ok(binary("#", Expr::Const(Value::Int(-1)), operand))
            }
            Tok::Word(w) if w == "not" => {
                self.next();
                Ok(Expr::Call(Func::Not, vec![self.expr(NOT_LEVEL)?]))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let column = self.column();
        match self.next() {
            Tok::Int(n) => Ok(Expr::Const(Value::Int(n))),
            Tok::Double(d) => Ok(Expr::Const(Value::Double(d))),
            Tok::Bool(b) => Ok(Expr::Const(Value::Bool(b))),
            Tok::Null => Ok(Expr::Const(Value::Null)),
            Tok::Var(name) => Ok(Expr::Var(name)),
            // 9223372036854775808 is a token of its own, valid only after a unary minus.
            Tok::MaxIntPlusOne => Err(error("syntax error", column)),
            Tok::Op("(") => {
                let inner = self.expr(0)?;
                self.expect_op(")")?;
                Ok(inner)
            }
            Tok::Word(w) if w == "case" => self.case(),
            Tok::Word(name) => self.call(&name, column),
            _ => Err(error("syntax error", column)),
        }
    }

    fn case(&mut self) -> Result<Expr, ParseError> {
        let mut args = Vec::new();
        while self.is_word("when") {
            self.next();
            args.push(self.expr(0)?);
            self.expect_word("then")?;
            args.push(self.expr(0)?);
        }
        if args.is_empty() {
            return Err(self.unexpected());
        }
        if self.is_word("else") {
            self.next();
            args.push(self.expr(0)?);
        } else {
            args.push(Expr::Const(Value::Null));
        }
        self.expect_word("end")?;
        Ok(Expr::Call(Func::Case, args))
    }

    fn call(&mut self, name: &str, column: usize) -> Result<Expr, ParseError> {
        let Some(&(_, func, fewest, most)) = FUNCTIONS.iter().find(|f| f.0 == name) else {
            return Err(error(&format!("unexpected function name ({name})"), column));
        };
        self.expect_op("(")?;
        let mut args = Vec::new();
        if *self.peek() != Tok::Op(")") {
            loop {
                args.push(self.expr(0)?);
                if *self.peek() != Tok::Op(",") {
                    break;
                }
                self.next();
            }
        }
        self.expect_op(")")?;
        if args.is_empty() && matches!(func, Func::Least | Func::Greatest) {
            return Err(error(
                &format!("at least one argument expected ({name})"),
                column,
            ));
        }
        if !(fewest..=most).contains(&args.len()) {
            return Err(error(
                &format!("unexpected number of arguments ({name})"),
                column,
            ));
        }
        Ok(Expr::Call(func, args))
    }
}

fn binary(op: &str, left: Expr, right: Expr) -> Expr {
    let (func, swap) = match op {
        "+" => (Func::Add, false),
        "-" => (Func::Sub, false),
        "*" => (Func::Mul, false),
        "/" => (Func::Div, false),
        "%" => (Func::Mod, false),
        "=" => (Func::Eq, false),
        "<>" | "!=" => (Func::Ne, false),
        "<" => (Func::Lt, false),
        "<=" => (Func::Le, false),
        ">" => (Func::Lt, true),
        ">=" => (Func::Le, true),
        "&" => (Func::BitAnd, false),
        "|" => (Func::BitOr, false),
        "#" => (Func::BitXor, false),
        "<<" => (Func::Shl, false),
        ">>" => (Func::Shr, false),
        "and" => (Func::And, false),
        _ => (Func::Or, false),
    };
    let args = if swap {
        vec![right, left]
    } else {
        vec![left, right]
    };
    Expr::Call(func, args)
}
