//! `\shell` and `\setshell`: the command's words, variables in place (`::` for a literal colon),
//! run by `sh -c` without blocking the client's thread; `\setshell` reads an integer back.

use std::process::Stdio;

use super::eval::EvalError;
use super::model::Word;
use super::vars::Variables;

pub async fn shell(vars: &Variables, words: &[Word], capture: bool) -> Result<String, EvalError> {
    let mut line = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        match word {
            Word::Text(t) => line.push_str(t),
            Word::Var(name) => {
                if !vars.write_text(name, &mut line) {
                    return Err(EvalError(format!("undefined variable \"{name}\"")));
                }
            }
        }
    }
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(&line).stdin(Stdio::null());
    if !capture {
        command.stdout(Stdio::null());
    }
    let output = command
        .output()
        .await
        .map_err(|e| EvalError(format!("could not launch shell command: {e}")))?;
    if !output.status.success() {
        return Err(EvalError(format!("shell command failed: {line}")));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// What `\setshell` stores: the output, which must be an integer.
pub fn setshell_value(output: &str) -> Result<i64, EvalError> {
    let trimmed = output.trim();
    trimmed.parse::<i64>().map_err(|_| {
        EvalError(format!(
            "\\setshell: shell command must return an integer (not \"{trimmed}\")"
        ))
    })
}
