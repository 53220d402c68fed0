//! The start gate of a worker in a scaled-out run: after every client has connected, the run
//! waits until the coordinator names the instant it starts at (in this machine's monotonic
//! clock), so all workers start together. An ungated run starts as soon as it is connected.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a waiting run looks at its cancel flag.
const CANCEL_CHECK: Duration = Duration::from_millis(50);

pub struct StartGate {
    gated: bool,
    waiting: AtomicBool,
    go: Mutex<Option<Instant>>,
    opened: Condvar,
}

impl StartGate {
    pub fn new(gated: bool) -> Self {
        Self {
            gated,
            waiting: AtomicBool::new(false),
            go: Mutex::new(None),
            opened: Condvar::new(),
        }
    }

    /// Called once connected: the instant to start at; now when ungated or cancelled.
    pub fn connected_then_wait(&self, cancelled: &AtomicBool) -> Instant {
        if !self.gated {
            return Instant::now();
        }
        self.waiting.store(true, Ordering::SeqCst);
        let mut go = self.go.lock().expect("gate lock");
        loop {
            if let Some(at) = *go {
                self.waiting.store(false, Ordering::SeqCst);
                drop(go);
                let now = Instant::now();
                if at > now {
                    std::thread::sleep(at - now);
                }
                return at.max(now);
            }
            if cancelled.load(Ordering::Relaxed) {
                self.waiting.store(false, Ordering::SeqCst);
                return Instant::now();
            }
            go = self
                .opened
                .wait_timeout(go, CANCEL_CHECK)
                .expect("gate lock")
                .0;
        }
    }

    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Names the start instant (the first call wins).
    pub fn open(&self, at: Instant) {
        let mut go = self.go.lock().expect("gate lock");
        if go.is_none() {
            *go = Some(at);
        }
        self.opened.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_gated_run_starts_at_the_named_instant() {
        let gate = Arc::new(StartGate::new(true));
        let cancelled = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (gate, cancelled) = (gate.clone(), cancelled.clone());
            std::thread::spawn(move || gate.connected_then_wait(&cancelled))
        };
        while !gate.is_waiting() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let at = Instant::now() + Duration::from_millis(30);
        gate.open(at);
        let started = waiter.join().unwrap();
        assert_eq!(started, at);
        assert!(Instant::now() >= at && !gate.is_waiting());
    }

    #[test]
    fn an_ungated_or_cancelled_run_does_not_wait() {
        let cancelled = AtomicBool::new(false);
        let before = Instant::now();
        assert!(StartGate::new(false).connected_then_wait(&cancelled) >= before);
        cancelled.store(true, Ordering::Relaxed);
        let gate = StartGate::new(true);
        assert!(gate.connected_then_wait(&cancelled).elapsed() < Duration::from_secs(1));
    }
}
