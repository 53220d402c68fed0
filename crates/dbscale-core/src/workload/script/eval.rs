//! Evaluating pgbench expressions ([`super::expr`]): pgbench's four types, its coercions and their
//! errors, lazy AND, OR and CASE (a NULL operand makes AND and OR NULL; CASE takes the first
//! true condition, NULL and zero being false), NULL in any other function's arguments making the
//! result NULL (but for IS and debug), bigint overflow and division by zero as errors, and the
//! functions with pgbench's results: the FNV-1a and MurmurHash2 hashes, and the random
//! functions with pgbench's distributions over the client's generator.

use rand::Rng;

use super::expr::{Expr, Func};
use super::value::{fail, format_g15, EvalError, Value};

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;
const MIN_GAUSSIAN_PARAM: f64 = 2.0;
const MIN_ZIPFIAN_PARAM: f64 = 1.001;
const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// What evaluation needs from the client: its variables, `:default_seed`, its generator, and
/// where `debug()` writes.
pub trait Context {
    /// The variable's value; an undefined variable or a value that is no number, boolean or
    /// NULL is an error.
    fn variable(&mut self, name: &str) -> Result<Value, EvalError>;
    fn default_seed(&self) -> i64;
    fn rng(&mut self) -> &mut dyn rand::RngCore;
    fn debug(&mut self, _line: &str) {}
}

/// The most arguments a function call may evaluate (pgbench's MAX_FARGS); CASE, AND and OR are
/// not calls in this sense.
pub const MAX_ARGUMENTS: usize = 16;

pub fn evaluate(expr: &Expr, ctx: &mut dyn Context) -> Result<Value, EvalError> {
    match expr {
        Expr::Const(v) => Ok(*v),
        Expr::Var(name) => ctx.variable(name),
        Expr::Call(func @ (Func::And | Func::Or | Func::Case), args) => lazy(*func, args, ctx),
        Expr::Call(_, args) if args.len() > MAX_ARGUMENTS => {
            // pgbench evaluates the first MAX_ARGUMENTS, then refuses the rest.
            for arg in &args[..MAX_ARGUMENTS] {
                evaluate(arg, ctx)?;
            }
            Err(fail(format!(
                "too many function arguments, maximum is {MAX_ARGUMENTS}"
            )))
        }
        Expr::Call(func, args) => {
            // Up to four arguments on the stack (every function but greatest and least).
            let mut on_stack = [Value::Null; 4];
            let spilled: Vec<Value>;
            let values: &[Value] = if args.len() <= on_stack.len() {
                for (slot, arg) in on_stack.iter_mut().zip(args) {
                    *slot = evaluate(arg, ctx)?;
                }
                &on_stack[..args.len()]
            } else {
                spilled = args
                    .iter()
                    .map(|a| evaluate(a, ctx))
                    .collect::<Result<_, _>>()?;
                &spilled
            };
            if values.contains(&Value::Null) && !matches!(func, Func::Is | Func::Debug) {
                return Ok(Value::Null);
            }
            call(*func, values, ctx)
        }
    }
}

fn lazy(func: Func, args: &[Expr], ctx: &mut dyn Context) -> Result<Value, EvalError> {
    if func == Func::Case {
        for pair in args.chunks(2) {
            match pair {
                [when, then] => {
                    if evaluate(when, ctx)?.truth() {
                        return evaluate(then, ctx);
                    }
                }
                [otherwise] => return evaluate(otherwise, ctx),
                _ => unreachable!("chunks of 2"),
            }
        }
        return Ok(Value::Null);
    }
    let first = evaluate(&args[0], ctx)?;
    if first == Value::Null {
        return Ok(Value::Null);
    }
    let decided = first.to_bool()?;
    if decided == (func == Func::Or) {
        return Ok(Value::Bool(decided));
    }
    match evaluate(&args[1], ctx)? {
        Value::Null => Ok(Value::Null),
        second => Ok(Value::Bool(second.to_bool()?)),
    }
}

fn call(func: Func, v: &[Value], ctx: &mut dyn Context) -> Result<Value, EvalError> {
    use Func::*;
    Ok(match func {
        Add | Sub | Mul | Div | Mod | Eq | Ne | Le | Lt => arithmetic(func, v[0], v[1])?,
        BitAnd | BitOr | BitXor | Shl | Shr => {
            let (l, r) = (v[0].to_int()?, v[1].to_int()?);
            Value::Int(match func {
                BitAnd => l & r,
                BitOr => l | r,
                BitXor => l ^ r,
                Shl => l.wrapping_shl(r as u32),
                _ => l.wrapping_shr(r as u32),
            })
        }
        Not => Value::Bool(!v[0].to_bool()?),
        Is => Value::Bool(match (v[0], v[1]) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            _ => false,
        }),
        Pi => Value::Double(std::f64::consts::PI),
        Abs => match v[0] {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            other => Value::Double(other.to_double()?.abs()),
        },
        Debug => {
            let shown = match v[0] {
                Value::Null => "null".to_string(),
                Value::Bool(b) => format!("boolean {b}"),
                Value::Int(i) => format!("int {i}"),
                Value::Double(d) => format!("double {}", format_g15(d)),
            };
            ctx.debug(&shown);
            v[0]
        }
        Double => Value::Double(v[0].to_double()?),
        Sqrt => Value::Double(v[0].to_double()?.sqrt()),
        Ln => Value::Double(v[0].to_double()?.ln()),
        Exp => Value::Double(v[0].to_double()?.exp()),
        Int => Value::Int(v[0].to_int()?),
        Least | Greatest => extremum(func == Greatest, v)?,
        Pow => Value::Double(v[0].to_double()?.powf(v[1].to_double()?)),
        ModFn => arithmetic(Mod, v[0], v[1])?,
        Hash | HashMurmur2 | HashFnv1a => {
            let value = v[0].to_int()?;
            let seed = match v.get(1) {
                Some(s) => s.to_int()?,
                None => ctx.default_seed(),
            };
            Value::Int(if func == HashFnv1a {
                hash_fnv1a(value, seed)
            } else {
                hash_murmur2(value, seed)
            })
        }
        Random | RandomExponential | RandomGaussian | RandomZipfian => random(func, v, ctx)?,
        Permute => {
            let (value, size) = (v[0].to_int()?, v[1].to_int()?);
            let seed = match v.get(2) {
                Some(s) => s.to_int()?,
                None => ctx.default_seed(),
            };
            if size <= 0 {
                return Err(fail(
                    "permute size parameter must be greater than zero".into(),
                ));
            }
            Value::Int(super::permute::permute(value, size, seed))
        }
        And | Or | Case => unreachable!("evaluated lazily"),
    })
}

fn arithmetic(func: Func, l: Value, r: Value) -> Result<Value, EvalError> {
    use Func::*;
    if func != Mod && (matches!(l, Value::Double(_)) || matches!(r, Value::Double(_))) {
        let (a, b) = (l.to_double()?, r.to_double()?);
        return Ok(match func {
            Add => Value::Double(a + b),
            Sub => Value::Double(a - b),
            Mul => Value::Double(a * b),
            Div => Value::Double(a / b),
            Eq => Value::Bool(a == b),
            Ne => Value::Bool(a != b),
            Le => Value::Bool(a <= b),
            _ => Value::Bool(a < b),
        });
    }
    let (a, b) = (l.to_int()?, r.to_int()?);
    let overflow = |what: &str| fail(format!("bigint {what} out of range"));
    Ok(match func {
        Add => Value::Int(a.checked_add(b).ok_or_else(|| overflow("add"))?),
        Sub => Value::Int(a.checked_sub(b).ok_or_else(|| overflow("sub"))?),
        Mul => Value::Int(a.checked_mul(b).ok_or_else(|| overflow("mul"))?),
        Eq => Value::Bool(a == b),
        Ne => Value::Bool(a != b),
        Le => Value::Bool(a <= b),
        Lt => Value::Bool(a < b),
        _ => {
            if b == 0 {
                return Err(fail("division by zero".into()));
            }
            if func == Div {
                Value::Int(a.checked_div(b).ok_or_else(|| overflow("div"))?)
            } else {
                Value::Int(a.wrapping_rem(b)) // i64::MIN % -1 is 0, as pgbench makes it
            }
        }
    })
}

fn extremum(greatest: bool, v: &[Value]) -> Result<Value, EvalError> {
    if v.iter().any(|x| matches!(x, Value::Double(_))) {
        let mut best = v[0].to_double()?;
        for x in &v[1..] {
            let d = x.to_double()?;
            best = if greatest { best.max(d) } else { best.min(d) };
        }
        return Ok(Value::Double(best));
    }
    let mut best = v[0].to_int()?;
    for x in &v[1..] {
        let i = x.to_int()?;
        best = if greatest { best.max(i) } else { best.min(i) };
    }
    Ok(Value::Int(best))
}

/// FNV-1a over the value's 8 bytes, little end first, from the offset basis XOR the seed.
pub fn hash_fnv1a(value: i64, seed: i64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS ^ seed as u64;
    let mut rest = value;
    for _ in 0..8 {
        hash ^= (rest & 0xff) as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        rest >>= 8;
    }
    hash as i64
}

/// MurmurHash2 (64-bit) of one 8-byte value.
pub fn hash_murmur2(value: i64, seed: i64) -> i64 {
    let mut k = (value as u64).wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    let mut hash = ((seed as u64) ^ MM2_MUL_TIMES_8) ^ k;
    hash = hash.wrapping_mul(MM2_MUL);
    hash ^= hash >> MM2_ROT;
    hash = hash.wrapping_mul(MM2_MUL);
    hash ^= hash >> MM2_ROT;
    hash as i64
}

fn random(func: Func, v: &[Value], ctx: &mut dyn Context) -> Result<Value, EvalError> {
    let (min, max) = (v[0].to_int()?, v[1].to_int()?);
    if min > max {
        return Err(fail("empty range given to random".into()));
    }
    if max
        .checked_sub(min)
        .and_then(|d| d.checked_add(1))
        .is_none()
    {
        return Err(fail("random range is too large".into()));
    }
    let rng = ctx.rng();
    if func == Func::Random {
        return Ok(Value::Int(rng.gen_range(min..=max)));
    }
    let param = v[2].to_double()?;
    let span = (max - min + 1) as f64;
    let offset = match func {
        Func::RandomExponential => {
            if param <= 0.0 {
                return Err(fail(format!(
                    "exponential parameter must be greater than zero (not {param:.6})"
                )));
            }
            // The exponential cut at `param`, scaled to [0, 1).
            let cut = (-param).exp();
            let uniform: f64 = 1.0 - rng.gen::<f64>();
            -(cut + (1.0 - cut) * uniform).ln() / param
        }
        Func::RandomGaussian => {
            if param < MIN_GAUSSIAN_PARAM {
                return Err(fail(format!(
                    "gaussian parameter must be at least {MIN_GAUSSIAN_PARAM:.6} (not {param:.6})"
                )));
            }
            // A standard normal draw within [-param, param), mapped to [0, 1).
            let stdev = loop {
                let (u1, u2): (f64, f64) = (1.0 - rng.gen::<f64>(), rng.gen::<f64>());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
                if (-param..param).contains(&z) {
                    break z;
                }
            };
            (stdev + param) / (2.0 * param)
        }
        _ => {
            if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                return Err(fail(format!("zipfian parameter must be in range [{MIN_ZIPFIAN_PARAM:.3}, {MAX_ZIPFIAN_PARAM:.0}] (not {param:.6})")));
            }
            return Ok(Value::Int(min - 1 + zipfian(rng, max - min + 1, param)));
        }
    };
    Ok(Value::Int(min + ((span * offset) as i64).min(max - min)))
}

/// Zipfian ranks 1..=n with exponent s, by rejection (Devroye, "Non-Uniform Random Variate
/// Generation", p. 550), as pgbench draws them.
fn zipfian(rng: &mut dyn rand::RngCore, n: i64, s: f64) -> i64 {
    let b = 2.0f64.powf(s - 1.0);
    loop {
        let u: f64 = 1.0 - rng.gen::<f64>();
        let v: f64 = rng.gen::<f64>();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        if x > n as f64 || x < 1.0 {
            continue;
        }
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b {
            return x as i64;
        }
    }
}
