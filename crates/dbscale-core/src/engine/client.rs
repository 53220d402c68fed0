//! One client: takes its next start time (now in the closed model, the next arrival in the open
//! one), runs one transaction with retries, records the outcome, and keeps its connection alive.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;

use super::pool::{ConnectionPool, Lease};
use super::recorder::ThreadRecorder;
use super::schedule::ArrivalSchedule;
use super::sessions::OpenSessions;
use super::transaction_log::{LogLine, Logged};
use super::RunShared;
use crate::driver::{ConnectMode, Connection, DbError};
use crate::stats::commands::merge_tallies;
use crate::workload::WorkloadClient;

/// How long a client waits before trying to reconnect, at first and at most.
const RECONNECT_FIRST: Duration = Duration::from_millis(20);
const RECONNECT_MAX: Duration = Duration::from_secs(1);
/// Granularity at which a sleeping client notices a cancel.
const SLEEP_SLICE: Duration = Duration::from_millis(100);
/// How often a client away from its home node checks whether it can go back (at first; each
/// check that finds it still gone doubles the wait, up to `HOME_CHECK_MAX`).
pub const HOME_CHECK: Duration = Duration::from_secs(1);
const HOME_CHECK_MAX: Duration = Duration::from_secs(60);
/// How long a client waits for its home node to take a connection when it checks: longer, and
/// the node is not back.
const HOME_CONNECT_LIMIT: Duration = Duration::from_secs(1);

/// Whether a client ever had a connection: a client that tried and never got one is counted, so
/// a run where the server refused some clients cannot pass for one with all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectState {
    Untried,
    Failing,
    Connected,
}

impl ConnectState {
    /// Records a connection attempt's outcome (`None`: it succeeded) and keeps the thread's
    /// counts of clients connected and of clients that tried and never connected.
    pub fn note(&mut self, recorder: &mut ThreadRecorder, failure: Option<(&DbError, Instant)>) {
        match failure {
            Some((error, at)) => {
                recorder.connect_failed(error, at);
                if *self == ConnectState::Untried {
                    recorder.totals.clients_never_connected += 1;
                    *self = ConnectState::Failing;
                }
            }
            None if *self == ConnectState::Connected => {}
            None => {
                if *self == ConnectState::Failing {
                    recorder.totals.clients_never_connected -= 1;
                }
                recorder.totals.clients_connected += 1;
                *self = ConnectState::Connected;
            }
        }
    }
}

/// What one attempt to open a client's connection came to.
enum Opened {
    Ready,
    /// It opened after the run's end and was closed unused.
    Late,
    /// It failed at this instant (noted already).
    Failed(Instant),
}

pub struct Client {
    pub shared: Arc<RunShared>,
    pub recorder: Rc<RefCell<ThreadRecorder>>,
    pub schedule: Option<Rc<RefCell<ArrivalSchedule>>>,
    pub conn: Option<Connection>,
    /// Set when clients share connections: the thread's pool.
    pub pool: Option<Rc<ConnectionPool>>,
    /// Routing slot of the connection: the client's (or the pooled connection's) place,
    /// which gives its home node.
    pub slot: u32,
    /// The node the connection is on.
    pub node: usize,
    /// The node whose session was lost, until the client connects again (a failover when it
    /// lands elsewhere).
    pub lost_from: Option<usize>,
    /// When a client away from its home node next looks whether it can go back.
    pub next_home_check: Instant,
    /// How long after a failed home check the next one comes (doubles each time, to a minute).
    pub home_check_every: Duration,
    pub workload: WorkloadClient,
    pub rng: SmallRng,
    /// When the client starts (spread over the ramp).
    pub begin_at: Instant,
    pub deadline: Instant,
    pub connect_state: ConnectState,
    /// The thread's sessions with their cancel keys, for the hard stop (not kept per lease).
    pub sessions: Rc<OpenSessions>,
    /// The client's id in the whole run, and its transactions so far (the log's numbering).
    pub id: u32,
    pub number: u64,
}

/// When a transaction was due, and how late it started (the open model's schedule lag).
#[derive(Clone, Copy)]
struct Due {
    at: Instant,
    lag: Duration,
}

impl Client {
    pub async fn run(mut self) {
        let per_transaction = self.shared.config.connect == ConnectMode::PerTransaction;
        let max_tries = self.shared.workload.max_tries(self.shared.config.max_tries);
        let paced = self.schedule.is_none();
        // A counted run (pgbench -t) has no deadline to end a client that cannot connect: like
        // pgbench, such a client stops (its failure is counted and judged).
        let counted = self.shared.config.transactions.is_some();
        let limit = self.shared.config.transactions.unwrap_or(u64::MAX);
        let mut ran = 0u64;
        if self.sleep_until(self.begin_at).await {
            loop {
                let now = Instant::now();
                if now >= self.deadline || self.shared.is_cancelled() || ran >= limit {
                    break;
                }
                // Between transactions, never inside one: a home check is no transaction's
                // latency.
                if self.pool.is_none() && self.conn.is_some() {
                    self.go_home_when_back().await;
                }
                // TPC-C's keying time (the closed model only: the open one has its own arrivals).
                let keying = self.workload.before(&mut self.rng);
                if paced && !keying.is_zero() && !self.sleep_until(now + keying).await {
                    break;
                }
                let Some(due) = self.next_start().await else {
                    break;
                };
                if let Some(pool) = self.pool.clone() {
                    if !self.lease(&pool).await {
                        if counted {
                            break;
                        }
                        continue;
                    }
                    self.transaction(due, max_tries).await;
                    ran += 1;
                    match self.conn.take() {
                        Some(conn) => pool.release(conn, self.slot, self.node),
                        None => pool.discard(self.slot),
                    }
                } else {
                    if self.conn.is_none() && !self.connect(per_transaction, counted).await {
                        if counted {
                            break;
                        }
                        continue;
                    }
                    self.transaction(due, max_tries).await;
                    ran += 1;
                    if per_transaction {
                        if let Some(conn) = self.conn.take() {
                            self.sessions.closed(self.id);
                            conn.close().await;
                        }
                    }
                }
                let think = self.workload.after(&mut self.rng);
                if paced && !think.is_zero() && !self.sleep_until(Instant::now() + think).await {
                    break;
                }
            }
        }
        if let Some(conn) = self.conn.take() {
            self.sessions.closed(self.id);
            conn.close().await;
        }
        if let Some(tallies) = self.workload.command_tallies() {
            merge_tallies(&mut self.recorder.borrow_mut().totals.commands, tallies);
        }
    }

    /// When the next transaction is due: now in the closed model, the next arrival in the open
    /// one (None when the run is over first). Under a latency limit (pgbench `-L`), arrivals
    /// already later than the limit are skipped: counted and logged, never sent.
    async fn next_start(&mut self) -> Option<Due> {
        let Some(schedule) = self.schedule.clone() else {
            return Some(Due {
                at: Instant::now(),
                lag: Duration::ZERO,
            });
        };
        let limit = self.shared.latency_limit;
        let mut slot = schedule.borrow_mut().take();
        while let Some(limit) = limit {
            let now = Instant::now();
            if slot >= self.deadline || now <= slot + limit {
                break;
            }
            let mut recorder = self.recorder.borrow_mut();
            recorder.skipped(slot);
            recorder.log(&LogLine {
                client: self.id,
                number: self.number,
                outcome: Logged::Skipped,
                script: 0,
                at: now,
                lag: now - slot,
                tries: 0,
            });
            drop(recorder);
            self.number += 1;
            slot = schedule.borrow_mut().take();
        }
        if slot >= self.deadline {
            return None;
        }
        if !self.sleep_until(slot).await {
            self.recorder.borrow_mut().totals.counts.unstarted += 1;
            return None;
        }
        let lag = Instant::now().saturating_duration_since(slot);
        self.recorder.borrow_mut().schedule_lag(lag);
        Some(Due { at: slot, lag })
    }

    /// Takes a connection from the pool, opening one if the pool has a free place; false (after
    /// a short pause) if that failed.
    async fn lease(&mut self, pool: &ConnectionPool) -> bool {
        let (lease, slot) = pool.acquire().await;
        self.slot = slot;
        match lease {
            Lease::Ready(conn, node) => {
                self.conn = Some(conn);
                self.node = node;
                self.note_connect(None);
                true
            }
            Lease::Open => match self.open(slot).await {
                Opened::Ready => true,
                Opened::Late => {
                    pool.discard(slot);
                    false
                }
                Opened::Failed(at) => {
                    pool.discard(slot);
                    self.sleep_until(at + RECONNECT_FIRST).await;
                    false
                }
            },
        }
    }

    /// Runs one transaction, retrying the errors the workload deems retryable (pgbench:
    /// serialization failures and deadlocks) up to `max_tries` with the same random values.
    async fn transaction(&mut self, due: Due, max_tries: u32) {
        let intended = due.at;
        let replay = self.rng.clone();
        let mut tries = 0;
        self.recorder.borrow_mut().in_flight += 1;
        loop {
            tries += 1;
            let outcome = self.run_once().await;
            let end = Instant::now();
            match outcome {
                Ok(done) => {
                    let latency = end.saturating_duration_since(intended);
                    if let Some(availability) = &self.shared.nodes.availability {
                        if end >= self.shared.start_instant() {
                            availability.success(self.node, end);
                        }
                    }
                    let mut recorder = self.recorder.borrow_mut();
                    recorder.success(&done, latency, end, tries, self.node);
                    recorder.log(&LogLine {
                        client: self.id,
                        number: self.number,
                        outcome: Logged::Done(latency),
                        script: done.kind,
                        at: end,
                        lag: due.lag,
                        tries,
                    });
                    break;
                }
                Err(error) => {
                    self.recorder.borrow_mut().error(&error, end);
                    if let Some(node) = self.recorder.borrow_mut().node(self.node, end) {
                        node.errors += 1;
                    }
                    let retry = self
                        .shared
                        .workload
                        .is_retryable(&error.class, self.shared.dialect())
                        && tries < max_tries
                        && end < self.deadline;
                    if error.is_node_lost() || self.shared.nodes.is_wrong_node(&error) {
                        self.lose_session(end).await;
                    } else if let Some(conn) = self.conn.as_mut() {
                        if let Err(reset_error) = conn.reset().await {
                            self.recorder
                                .borrow_mut()
                                .error(&reset_error, Instant::now());
                            self.conn = None;
                        }
                    }
                    if retry && self.conn.is_some() {
                        self.rng = replay.clone();
                        continue;
                    }
                    let kind = self.workload.kind_in_flight();
                    let mut recorder = self.recorder.borrow_mut();
                    recorder.failure(kind, end, tries, self.node);
                    recorder.log(&LogLine {
                        client: self.id,
                        number: self.number,
                        outcome: Logged::Failed,
                        script: kind,
                        at: end,
                        lag: due.lag,
                        tries,
                    });
                    break;
                }
            }
        }
        self.recorder.borrow_mut().in_flight -= 1;
        self.number += 1;
    }

    /// Opens a connection and prepares the statements. In persistent mode it keeps trying with
    /// backoff until it succeeds or the run ends; per transaction a failure counts and moves on;
    /// `once` (a counted run) gives up after one failed attempt.
    async fn connect(&mut self, per_transaction: bool, once: bool) -> bool {
        let mut backoff = RECONNECT_FIRST;
        loop {
            let at = match self.open(self.slot).await {
                Opened::Ready => return true,
                Opened::Late => return false,
                Opened::Failed(at) => at,
            };
            if per_transaction {
                self.recorder.borrow_mut().failure(0, at, 1, self.node);
            }
            if once || !self.sleep_until(at + backoff).await || per_transaction {
                return false;
            }
            backoff = (backoff * 2).min(RECONNECT_MAX);
        }
    }

    /// One attempt to open the client's connection on `slot`, its outcome noted. A connection
    /// that opens after the run's end is closed unused: by then the other clients have closed
    /// theirs, and a client the server refused during the run would pass for a connected one.
    async fn open(&mut self, slot: u32) -> Opened {
        let begun = Instant::now();
        match self.shared.open_connection(slot).await {
            Ok((conn, _)) if Instant::now() >= self.deadline => {
                conn.close().await;
                Opened::Late
            }
            Ok((conn, node)) => {
                let now = Instant::now();
                let mut recorder = self.recorder.borrow_mut();
                recorder.connected(now - begun);
                if let Some(lost) = self.lost_from.take().filter(|lost| *lost != node) {
                    recorder.failover(lost, now);
                }
                drop(recorder);
                if self.pool.is_none() {
                    self.sessions.opened(self.id, node, &conn);
                }
                self.conn = Some(conn);
                self.node = node;
                self.note_connect(None);
                Opened::Ready
            }
            Err(error) => {
                let at = Instant::now();
                self.note_connect(Some((&error, at)));
                Opened::Failed(at)
            }
        }
    }

    /// One try of the transaction on the client's connection, within the run's transaction
    /// deadline when it has one: past it the server is asked to cancel the statement, and the
    /// session is given up (`client_timeout`).
    async fn run_once(&mut self) -> Result<crate::workload::TxnOutcome, DbError> {
        let conn = self.conn.as_mut().expect("connected before a transaction");
        let Some(limit) = self.shared.transaction_deadline() else {
            return self.workload.run(conn, &mut self.rng).await;
        };
        let key = conn.cancel_key();
        match tokio::time::timeout(limit, self.workload.run(conn, &mut self.rng)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                if let Some(key) = key {
                    self.shared.nodes.cancel(self.node, key).await;
                }
                Err(DbError::client_timeout(limit.as_secs_f64()))
            }
        }
    }

    /// The session's node is gone, will not serve, is the wrong kind (a standby asked for a
    /// write) or let the deadline pass: the session is dropped, the node tried last for a
    /// while, and the client's next connection counts as a failover if it lands elsewhere.
    async fn lose_session(&mut self, at: Instant) {
        if let Some(conn) = self.conn.take() {
            drop(conn);
        }
        self.sessions.closed(self.id);
        self.shared.nodes.suspect(self.node);
        if let Some(totals) = self.recorder.borrow_mut().node(self.node, at) {
            totals.lost += 1;
        }
        self.lost_from = Some(self.node);
    }

    /// A client away from its home node (after a failover) goes back once the node takes a
    /// connection again: affinity keeps a warehouse's writes on one node, round-robin keeps
    /// the spread. Checked at most once a second, never with shared connections.
    async fn go_home_when_back(&mut self) {
        if !self.shared.nodes.returns_home() || self.pool.is_some() {
            return;
        }
        let now = Instant::now();
        let home = self.shared.home_node(self.slot);
        if self.node == home || now < self.next_home_check || self.shared.nodes.is_suspect(home) {
            return;
        }
        // A home that cannot take a connection this quickly is not back (a frozen node accepts
        // the socket and never answers): the client stays where it works, the node is suspect
        // for the others too, and this client checks again later and later.
        let limit = HOME_CONNECT_LIMIT.min(self.deadline.saturating_duration_since(now));
        match tokio::time::timeout(limit, self.shared.open_on_node(home)).await {
            Ok(Ok(conn)) => {
                if let Some(old) = self.conn.replace(conn) {
                    old.close().await;
                }
                self.node = home;
                self.home_check_every = HOME_CHECK;
            }
            _ => {
                self.shared.nodes.suspect(home);
                self.home_check_every = (self.home_check_every * 2).min(HOME_CHECK_MAX);
            }
        }
        self.next_home_check = Instant::now() + self.home_check_every;
    }

    /// A connection attempt's outcome for this client (`None`: it succeeded). A connected
    /// client's next lease costs nothing here: no borrow of the recorder per transaction.
    fn note_connect(&mut self, failure: Option<(&DbError, Instant)>) {
        if failure.is_none() && self.connect_state == ConnectState::Connected {
            return;
        }
        self.connect_state
            .note(&mut self.recorder.borrow_mut(), failure);
    }

    /// Sleeps until `at`, waking early on cancel or the deadline; false if the client should stop.
    async fn sleep_until(&self, at: Instant) -> bool {
        loop {
            if self.shared.is_cancelled() {
                return false;
            }
            let now = Instant::now();
            if now >= at {
                return now < self.deadline || at < self.deadline;
            }
            if now >= self.deadline {
                return false;
            }
            let wake = at.min(now + SLEEP_SLICE).min(self.deadline);
            tokio::time::sleep_until(wake.into()).await;
        }
    }
}
