//! pgbench's per-transaction log (`-l`, `--sampling-rate`): one line per transaction, or per
//! sampled transaction, in pgbench's own format so its readers work on dbscale's files:
//!
//! `client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`
//!
//! `time` is the latency in microseconds, or `skipped` (a rate run's transaction already over
//! the latency limit when due) or `failed`; `schedule_lag` is written under a rate, `retries`
//! when more than one try is allowed. Each thread writes its own file through a buffer, so the
//! hot path costs a formatted line in memory; a write error (a full disk) stops the log, never
//! the run, and is reported with the result.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::config::RunConfig;
use crate::Error;

/// What a logged transaction came to.
#[derive(Debug, Clone, Copy)]
pub enum Logged {
    Done(Duration),
    Skipped,
    Failed,
}

/// One line's fields.
#[derive(Debug, Clone, Copy)]
pub struct LogLine {
    pub client: u32,
    pub number: u64,
    pub outcome: Logged,
    pub script: usize,
    pub at: Instant,
    pub lag: Duration,
    pub tries: u32,
}

/// A thread's log file.
pub struct TransactionLog {
    out: Option<BufWriter<File>>,
    rng: SmallRng,
    sampling_rate: f64,
    /// Wall-clock time at `base`, in microseconds since the epoch.
    base_epoch_us: u128,
    base: Instant,
    with_lag: bool,
    with_retries: bool,
    pub lines: u64,
    pub error: Option<String>,
}

/// The file thread `thread` writes: pgbench's names (`path`, then `path.1`, `path.2`, ...), with
/// `.wK` first for a scaled-out run's worker whose clients start at K.
pub fn file_name(config: &RunConfig, path: &str, thread: u32) -> String {
    let mut name = path.to_string();
    if let Some(share) = &config.share {
        name.push_str(&format!(".w{}", share.first_client));
    }
    if thread > 0 {
        name.push_str(&format!(".{thread}"));
    }
    name
}

/// Opens every thread's file before the run starts, so a path that cannot be written fails the
/// run before anything is measured.
pub fn open_all(config: &RunConfig, threads: u32, seed: u64) -> Result<Vec<TransactionLog>, Error> {
    let Some(log) = &config.transaction_log else {
        return Ok(Vec::new());
    };
    (0..threads)
        .map(|thread| {
            let name = file_name(config, &log.path, thread);
            let file = File::create(&name).map_err(|e| {
                Error::Config(format!("cannot write the transaction log {name}: {e}"))
            })?;
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            Ok(TransactionLog {
                out: Some(BufWriter::with_capacity(64 * 1024, file)),
                rng: SmallRng::seed_from_u64(seed ^ (0x106_0000 + u64::from(thread))),
                sampling_rate: log.sampling_rate,
                base_epoch_us: now.as_micros(),
                base: Instant::now(),
                with_lag: config.rate_tps.is_some(),
                with_retries: config.max_tries != 1,
                lines: 0,
                error: None,
            })
        })
        .collect()
}

impl TransactionLog {
    /// Writes `line` if it is sampled (every line at a sampling rate of 1).
    pub fn write(&mut self, line: &LogLine) {
        if self.sampling_rate < 1.0 && self.rng.gen::<f64>() >= self.sampling_rate {
            return;
        }
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let epoch_us = match line.at.checked_duration_since(self.base) {
            Some(after) => self.base_epoch_us + after.as_micros(),
            None => self
                .base_epoch_us
                .saturating_sub(self.base.duration_since(line.at).as_micros()),
        };
        let written = (|| {
            write!(out, "{} {} ", line.client, line.number)?;
            match line.outcome {
                Logged::Done(latency) => write!(out, "{}", latency.as_micros())?,
                Logged::Skipped => out.write_all(b"skipped")?,
                Logged::Failed => out.write_all(b"failed")?,
            }
            write!(
                out,
                " {} {} {}",
                line.script,
                epoch_us / 1_000_000,
                epoch_us % 1_000_000
            )?;
            if self.with_lag {
                write!(out, " {}", line.lag.as_micros())?;
            }
            if self.with_retries {
                write!(out, " {}", line.tries.saturating_sub(1))?;
            }
            out.write_all(b"\n")
        })();
        match written {
            Ok(()) => self.lines += 1,
            Err(e) => self.fail(e),
        }
    }

    /// Flushes the file; call once when the thread ends.
    pub fn finish(&mut self) {
        if let Some(mut out) = self.out.take() {
            if let Err(e) = out.flush().and_then(|()| out.get_ref().sync_data()) {
                self.error.get_or_insert_with(|| e.to_string());
            }
        }
    }

    fn fail(&mut self, error: std::io::Error) {
        self.error = Some(format!(
            "the transaction log stopped after {} lines: {error}",
            self.lines
        ));
        self.out = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> RunConfig {
        RunConfig::from_json(json).unwrap()
    }

    #[test]
    fn lines_are_pgbench_s_format_and_sampled() {
        let dir = std::env::temp_dir().join(format!("dbscale-txlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log").display().to_string();
        let text = format!(
            r#"{{"target":{{"url":"postgresql://u@h/d"}},"workload":{{"name":"tpcb"}},
            "rate_tps":100,"max_tries":3,"transaction_log":{{"path":"{path}"}}}}"#
        );
        let mut logs = open_all(&config(&text), 2, 1).unwrap();
        assert_eq!(logs.len(), 2);
        let at = Instant::now();
        let line = |outcome, number| LogLine {
            client: 4,
            number,
            outcome,
            script: 1,
            at,
            lag: Duration::from_micros(250),
            tries: 2,
        };
        logs[0].write(&line(Logged::Done(Duration::from_micros(1500)), 0));
        logs[0].write(&line(Logged::Skipped, 1));
        logs[0].write(&line(Logged::Failed, 2));
        logs[0].finish();
        logs[1].finish();
        let written = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Vec<&str>> = written.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0][..4], ["4", "0", "1500", "1"]);
        assert_eq!(lines[1][2], "skipped");
        assert_eq!(lines[2][2], "failed");
        let epoch: u64 = lines[0][4].parse().unwrap();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(now - epoch < 5, "{epoch} vs {now}");
        assert_eq!(lines[0][6..], ["250", "1"]); // lag (a rate run), retries (max_tries 3)
        assert!(std::path::Path::new(&format!("{path}.1")).exists());

        let sampled = format!(
            r#"{{"target":{{"url":"postgresql://u@h/d"}},"workload":{{"name":"tpcb"}},
            "transaction_log":{{"path":"{path}","sampling_rate":0.1}}}}"#
        );
        let mut logs = open_all(&config(&sampled), 1, 7).unwrap();
        for n in 0..10_000 {
            logs[0].write(&line(Logged::Done(Duration::from_micros(9)), n));
        }
        logs[0].finish();
        // Binomial(10000, 0.1): sd 30, so +-200 is over 6 sd.
        assert!((800..=1200).contains(&logs[0].lines), "{}", logs[0].lines);
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(written.lines().count() as u64, logs[0].lines);
        assert_eq!(written.lines().next().unwrap().split(' ').count(), 6);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_path_fails_before_the_run() {
        let text = r#"{"target":{"url":"postgresql://u@h/d"},"workload":{"name":"tpcb"},
            "transaction_log":{"path":"/nonexistent-dir/log"}}"#;
        let Err(error) = open_all(&config(text), 1, 1) else {
            panic!("opened a log in a missing directory");
        };
        assert!(
            error.to_string().contains("/nonexistent-dir/log"),
            "{error}"
        );
    }

    #[test]
    fn worker_and_thread_files_are_named_as_pgbench_names_them() {
        let text = r#"{"target":{"url":"postgresql://u@h/d"},"workload":{"name":"tpcb"},
            "clients":2,"share":{"first_client":4,"total_clients":8}}"#;
        let config = config(text);
        assert_eq!(file_name(&config, "/r/log", 0), "/r/log.w4");
        assert_eq!(file_name(&config, "/r/log", 2), "/r/log.w4.2");
    }
}
