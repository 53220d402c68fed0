//! `\shell` and `\setshell` as pgbench runs them: the command's words joined by spaces with
//! variables in place (`::` for a literal colon), at most 255 characters, run by `sh -c` without
//! blocking the client's thread. `\shell` fails when the command does; `\setshell` reads the
//! first line of its output (63 bytes at most) as an integer, whatever the command's status.
//! Errors start with the command's first word, as pgbench's do.

use std::process::Stdio;

use super::eval::EvalError;
use super::model::Word;
use super::vars::Variables;

/// pgbench's SHELL_COMMAND_SIZE less its terminating byte: a longer command is refused.
const MAX_COMMAND: usize = 255;
/// pgbench reads `\setshell`'s output into 64 bytes with `fgets`.
const MAX_RESULT: usize = 63;

pub async fn shell(vars: &Variables, words: &[Word], capture: bool) -> Result<String, EvalError> {
    let program = program(words);
    let mut line = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        match word {
            Word::Text(t) => line.push_str(t),
            Word::Var(name) => {
                if !vars.write_text(name, &mut line) {
                    return Err(EvalError(format!(
                        "{program}: undefined variable \":{name}\""
                    )));
                }
            }
        }
        if line.len() >= MAX_COMMAND {
            return Err(EvalError(format!("{program}: shell command is too long")));
        }
    }
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(&line).stdin(Stdio::null());
    if !capture {
        command.stdout(Stdio::null());
    }
    let launch_failed = || EvalError(format!("{program}: could not launch shell command"));
    let output = command.output().await.map_err(|_| launch_failed())?;
    if !capture && !output.status.success() {
        return Err(launch_failed());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// What `\setshell` stores: the first line of the output, which must be an integer.
pub fn setshell_value(words: &[Word], output: &str) -> Result<i64, EvalError> {
    let program = program(words);
    let mut first = output.split_inclusive('\n').next().unwrap_or("");
    if first.len() > MAX_RESULT {
        let mut cut = MAX_RESULT;
        while !first.is_char_boundary(cut) {
            cut -= 1;
        }
        first = &first[..cut];
    }
    if first.is_empty() {
        return Err(EvalError(format!(
            "{program}: could not read result of shell command"
        )));
    }
    // strtol: leading blanks and a sign, digits, then nothing but blanks.
    let trimmed = first.trim_start();
    let digits_end = trimmed
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '+' || c == '-'))))
        .map_or(trimmed.len(), |(i, _)| i);
    let (number, rest) = trimmed.split_at(digits_end);
    match number.parse::<i64>() {
        Ok(value) if rest.trim().is_empty() => Ok(i64::from(value as i32)),
        _ => Err(EvalError(format!(
            "{program}: shell command must return an integer (not \"{}\")",
            first.trim_end_matches('\n')
        ))),
    }
}

/// The command's first word as written (pgbench names the command by it).
fn program(words: &[Word]) -> String {
    match words.first() {
        Some(Word::Text(t)) => t.clone(),
        Some(Word::Var(name)) => format!(":{name}"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo() -> Vec<Word> {
        vec![Word::Text("echo".into())]
    }

    #[test]
    fn setshell_reads_the_first_line_as_strtol_does() {
        assert_eq!(setshell_value(&echo(), "  12  \n"), Ok(12));
        assert_eq!(setshell_value(&echo(), "-7\nmore\n"), Ok(-7));
        assert_eq!(
            setshell_value(&echo(), "abc\n").unwrap_err().0,
            "echo: shell command must return an integer (not \"abc\")"
        );
        assert_eq!(
            setshell_value(&echo(), "").unwrap_err().0,
            "echo: could not read result of shell command"
        );
        // pgbench keeps the value in an int.
        assert_eq!(setshell_value(&echo(), "4294967297"), Ok(1));
    }
}
