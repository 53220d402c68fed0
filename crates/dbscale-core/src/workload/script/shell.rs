//! `\shell` and `\setshell` as pgbench runs them: the command's words joined by spaces with
//! variables in place (`::` for a literal colon), at most 255 characters, run by `sh -c` without
//! blocking the client's thread. `\shell` fails when the command does, its output goes to
//! dbscale's standard output as pgbench's goes to its own; `\setshell` reads the
//! first line of its output (63 bytes at most) as an integer, whatever the command's status.
//! Errors start with the command's first word, as pgbench's do.
//!
//! A command runs in a process group of its own. If it outlives `SHELL_TIMEOUT`, or the run
//! stops with it still running (its client dropped at the hard stop), the whole group is killed:
//! no process of a script outlives its run.

use std::process::Stdio;
use std::time::Duration;

use super::model::Word;
use super::value::EvalError;
use super::vars::Variables;

/// pgbench's SHELL_COMMAND_SIZE less its terminating byte: a longer command is refused.
const MAX_COMMAND: usize = 255;
/// pgbench reads `\setshell`'s output into 64 bytes with `fgets`.
const MAX_RESULT: usize = 63;
/// The longest a `\shell` or `\setshell` command may run (pgbench has no limit).
pub const SHELL_TIMEOUT: Duration = Duration::from_secs(60);

/// A running command's process group, killed when dropped before the command was reaped.
struct Group {
    id: Option<i32>,
}

impl Group {
    fn reaped(&mut self) {
        self.id = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            // SAFETY: killpg only sends a signal; the group's leader is our unreaped child, so
            // its id cannot have been taken by another group.
            unsafe {
                libc::killpg(id, libc::SIGKILL);
            }
        }
    }
}

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
    run_line(&program, &line, capture, SHELL_TIMEOUT).await
}

/// Runs `line` by `sh -c` in a process group of its own, for at most `timeout`.
async fn run_line(
    program: &str,
    line: &str,
    capture: bool,
    timeout: Duration,
) -> Result<String, EvalError> {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(line)
        .stdin(Stdio::null())
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::inherit() // `\shell`'s output goes where pgbench lets it: its own stdout
        })
        .process_group(0)
        .kill_on_drop(true);
    let launch_failed = || EvalError(format!("{program}: could not launch shell command"));
    let child = command.spawn().map_err(|_| launch_failed())?;
    let mut group = Group {
        id: child.id().and_then(|id| i32::try_from(id).ok()),
    };
    let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(done) => done.map_err(|_| launch_failed())?,
        Err(_) => {
            return Err(EvalError(format!(
                "{program}: shell command did not end in {} s (killed)",
                timeout.as_secs_f64()
            )));
        }
    };
    group.reaped();
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
    fn a_command_past_its_time_is_killed_with_its_children() {
        let dir = std::env::temp_dir().join(format!("dbscale-shell-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("child.pid");
        let line = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let started = std::time::Instant::now();
        let got = runtime.block_on(run_line("sleep", &line, false, Duration::from_millis(300)));
        assert_eq!(
            got.unwrap_err().0,
            "sleep: shell command did not end in 0.3 s (killed)"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let child: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The background `sleep 30` went with its group (a zombie until reaped is gone too).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while unsafe { libc::kill(child, 0) } == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let alive = unsafe { libc::kill(child, 0) } == 0;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(!alive, "the command's child {child} outlived it");
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
