//! A run's verdict in words: `ok`, `errors` (some transactions failed, or errors were not
//! retried away), `failed` (nothing succeeded, or clients the server refused), with the notes a
//! reader needs (cancelled, abandoned transactions, retries that committed).

use std::collections::BTreeMap;

use crate::stats::result::Verdict;

/// Clients asked for and connected, for the verdict.
pub(super) struct Refused<'a> {
    pub clients: u32,
    pub connected: u32,
    pub message: Option<&'a str>,
    pub max_connections: Option<u64>,
}

impl Refused<'_> {
    /// "only 97 of 150 clients connected (...)" when some never connected.
    fn sentence(&self) -> Option<String> {
        if self.connected >= self.clients {
            return None;
        }
        let mut text = format!(
            "only {} of {} clients connected",
            self.connected, self.clients
        );
        if let Some(message) = self.message {
            text.push_str(&format!(" (server: {message})"));
        }
        if let Some(limit) = self.max_connections {
            text.push_str(&format!("; the server's max_connections is {limit}"));
        }
        Some(text)
    }
}

/// What the run's outcome is judged on.
pub(super) struct Tally<'a> {
    pub transactions: u64,
    pub failed: u64,
    pub retries: u64,
    pub error_total: u64,
    pub errors: &'a BTreeMap<String, u64>,
    pub cancelled: bool,
    pub abandoned: u64,
    pub duration_s: f64,
}

pub(super) fn verdict(tally: &Tally, refused: &Refused) -> Verdict {
    let Tally {
        transactions,
        failed,
        retries,
        error_total,
        errors,
        cancelled,
        abandoned,
        duration_s,
    } = *tally;
    let classes: Vec<String> = errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let mut notes = Vec::new();
    if cancelled {
        notes.push(format!("cancelled after {duration_s:.1} s"));
    }
    if abandoned > 0 {
        notes.push(format!(
            "{abandoned} transactions still running at the hard stop were abandoned"
        ));
    }
    // An error followed by a retry that committed is a retry, not an error of the run.
    let unretried = error_total.saturating_sub(retries);
    let (status, head) = if transactions == 0 && (failed > 0 || error_total > 0) {
        (
            "failed",
            format!("no transaction succeeded; errors: {}", classes.join(", ")),
        )
    } else if transactions == 0 {
        ("failed", "no transaction completed".to_string())
    } else if failed == 0 && unretried > 0 {
        (
            "errors",
            format!(
                "{transactions} transactions, none failed; errors: {}",
                classes.join(", ")
            ),
        )
    } else if failed > 0 {
        let share = 100.0 * failed as f64 / (failed + transactions) as f64;
        (
            "errors",
            format!(
                "{failed} of {} transactions failed ({share:.2}%); errors: {}",
                failed + transactions,
                classes.join(", ")
            ),
        )
    } else if retries > 0 {
        (
            "ok",
            format!(
                "{transactions} transactions, none failed; {retries} retries after {} \
                 (each retried transaction then committed)",
                classes.join(", ")
            ),
        )
    } else {
        ("ok", format!("{transactions} transactions, no errors"))
    };
    notes.insert(0, head);
    // A run whose clients the server refused measured a smaller run than the one asked for:
    // it fails, whatever its throughput.
    let status = match refused.sentence() {
        Some(sentence) => {
            notes.insert(0, sentence);
            "failed"
        }
        None => status,
    };
    Verdict {
        status: status.into(),
        message: notes.join("; "),
    }
}

/// A cluster run whose clients moved off lost nodes says so: the transactions those sessions
/// were running failed (counted above); the moves are the run's failovers.
pub(super) fn note_failovers(verdict: &mut Verdict, failovers: u64) {
    if failovers > 0 {
        verdict.message.push_str(&format!(
            "; {failovers} failover(s): clients moved off a lost node to another"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Refused = Refused {
        clients: 8,
        connected: 8,
        message: None,
        max_connections: Some(100),
    };

    /// The verdict of `transactions`, `failed` and `retries` with these errors (not cancelled).
    fn judge(transactions: u64, failed: u64, retries: u64, errors: &[(&str, u64)]) -> Verdict {
        judge_with(transactions, failed, retries, errors, &ALL)
    }

    fn judge_with(
        transactions: u64,
        failed: u64,
        retries: u64,
        errors: &[(&str, u64)],
        refused: &Refused,
    ) -> Verdict {
        let by_class: BTreeMap<String, u64> =
            errors.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        let tally = Tally {
            transactions,
            failed,
            retries,
            error_total: by_class.values().sum(),
            errors: &by_class,
            cancelled: false,
            abandoned: 0,
            duration_s: 10.0,
        };
        verdict(&tally, refused)
    }

    #[test]
    fn a_clean_run_is_ok() {
        let v = judge(1200, 0, 0, &[]);
        assert_eq!(v.status, "ok");
        assert_eq!(v.message, "1200 transactions, no errors");
    }

    #[test]
    fn failed_transactions_make_errors_with_their_share_and_classes() {
        let v = judge(996, 4, 0, &[("deadlock", 3), ("sql:23505", 1)]);
        assert_eq!(v.status, "errors");
        assert_eq!(
            v.message,
            "4 of 1000 transactions failed (0.40%); errors: deadlock 3, sql:23505 1"
        );
    }

    #[test]
    fn nothing_succeeding_is_a_failure() {
        let v = judge(0, 12, 0, &[("connect", 12)]);
        assert_eq!(v.status, "failed");
        assert_eq!(v.message, "no transaction succeeded; errors: connect 12");
        let quiet = judge(0, 0, 0, &[]);
        assert_eq!(
            (quiet.status.as_str(), quiet.message.as_str()),
            ("failed", "no transaction completed")
        );
    }

    #[test]
    fn cancellation_and_abandoned_transactions_are_noted() {
        let none = BTreeMap::new();
        let tally = Tally {
            transactions: 10,
            failed: 0,
            retries: 0,
            error_total: 0,
            errors: &none,
            cancelled: true,
            abandoned: 2,
            duration_s: 1.25,
        };
        let v = verdict(&tally, &ALL);
        assert_eq!(v.status, "ok");
        assert_eq!(
            v.message,
            "10 transactions, no errors; cancelled after 1.2 s; \
             2 transactions still running at the hard stop were abandoned"
        );
    }

    #[test]
    fn refused_clients_fail_a_run_whatever_it_measured() {
        let refused = Refused {
            clients: 150,
            connected: 97,
            message: Some("sorry, too many clients already"),
            max_connections: Some(100),
        };
        let v = judge_with(5000, 0, 0, &[("connect", 260)], &refused);
        assert_eq!(v.status, "failed");
        assert!(
            v.message.starts_with(
                "only 97 of 150 clients connected (server: sorry, too many clients already); \
                 the server's max_connections is 100; "
            ),
            "{}",
            v.message
        );
    }

    #[test]
    fn retries_that_committed_are_not_errors() {
        let v = judge(996, 0, 3, &[("deadlock", 3)]);
        assert_eq!(v.status, "ok");
        assert_eq!(
            v.message,
            "996 transactions, none failed; 3 retries after deadlock 3 (each retried \
             transaction then committed)"
        );
        // A retry that failed again, or an error never retried, still counts.
        assert_eq!(judge(996, 1, 3, &[("deadlock", 4)]).status, "errors");
        let lost = judge(996, 0, 3, &[("deadlock", 3), ("connection_lost", 1)]);
        assert_eq!(lost.status, "errors");
    }
}
