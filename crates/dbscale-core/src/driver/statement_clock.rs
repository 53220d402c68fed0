//! The client's own time per statement, when a run asks for it (`statement_timing`): each
//! engine thread keeps, per statement of the workload (by its index), a tally and an HDR
//! histogram of the time from sending the statement to its whole answer. Kept per thread, not
//! per client or connection, so a reconnect loses nothing and nothing is passed down the hot
//! path; off, a statement costs one thread-local flag read.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::Instant;

use crate::stats::commands::CommandTally;
use crate::stats::latency::LatencyHistogram;

/// One thread's figures, indexed like the workload's statements.
#[derive(Default)]
pub struct StatementClock {
    pub tallies: Vec<CommandTally>,
    pub histograms: Vec<LatencyHistogram>,
}

impl StatementClock {
    fn record(&mut self, index: usize, micros: f64, failed: bool) {
        if index >= self.tallies.len() {
            self.tallies.resize(index + 1, CommandTally::default());
            self.histograms
                .resize_with(index + 1, LatencyHistogram::new);
        }
        if failed {
            self.tallies[index].failures += 1;
            return;
        }
        self.tallies[index].add(micros);
        self.histograms[index].record_us(micros.round() as u64);
    }
}

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static CLOCK: RefCell<StatementClock> = RefCell::new(StatementClock::default());
}

/// Starts timing this thread's statements (its figures so far are dropped).
pub fn enable(statements: usize) {
    CLOCK.with(|c| {
        let mut clock = c.borrow_mut();
        clock.tallies = vec![CommandTally::default(); statements];
        clock.histograms = (0..statements).map(|_| LatencyHistogram::new()).collect();
    });
    ON.with(|on| on.set(true));
}

/// Stops timing and hands over this thread's figures.
pub fn take() -> StatementClock {
    ON.with(|on| on.set(false));
    CLOCK.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// Whether this thread times its statements.
#[inline]
pub fn is_on() -> bool {
    ON.with(Cell::get)
}

/// Before a statement: the instant it starts, when this thread times statements.
#[inline]
pub fn start() -> Option<Instant> {
    if ON.with(Cell::get) {
        Some(Instant::now())
    } else {
        None
    }
}

/// After it: its time (or its failure) added to statement `index`'s figures.
#[inline]
pub fn finish(began: Option<Instant>, index: usize, failed: bool) {
    if let Some(began) = began {
        let micros = began.elapsed().as_secs_f64() * 1e6;
        CLOCK.with(|c| c.borrow_mut().record(index, micros, failed));
    }
}

/// `work` (a statement's future) timed as statement `index`.
pub async fn timed<T, E>(index: usize, work: impl Future<Output = Result<T, E>>) -> Result<T, E> {
    let began = start();
    let outcome = work.await;
    finish(began, index, outcome.is_err());
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_records_nothing_and_on_records_by_index() {
        finish(start(), 0, false);
        assert!(take().tallies.is_empty());
        enable(2);
        finish(start(), 1, false);
        finish(start(), 1, true);
        finish(start(), 3, false); // past the declared statements: grows
        let clock = take();
        assert_eq!(clock.tallies.len(), 4);
        assert_eq!(clock.tallies[0].count, 0);
        assert_eq!((clock.tallies[1].count, clock.tallies[1].failures), (1, 1));
        assert_eq!(clock.histograms[1].count(), 1);
        assert_eq!(clock.tallies[3].count, 1);
        assert!(start().is_none(), "take() stops the clock");
    }
}
