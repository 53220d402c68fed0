//! The load engine: sets a run up (connect, check the data, pgbench's pre-run maintenance), starts
//! one single-threaded event loop per thread with its share of the clients, and assembles the
//! result. Python drives it through [`RunningRun`]: poll intervals, wait, cancel, take the result.

mod admin;
pub use crate::runtime::block_on;
mod assemble;
mod availability;
mod client;
pub(crate) mod client_set;
pub mod cpu;
mod gate;
mod merge;
mod nodes;
mod outcome;
mod pool;
mod recorder;
mod schedule;
mod sessions;
mod transaction_log;
mod verdict;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::RunConfig;
use crate::driver::{Connection, DbError, Dialect, Statement};
use crate::stats::{IntervalMerger, IntervalSnapshot, RunResult};
use crate::workload::Workload;
use crate::Error;

pub use admin::{check, check_within, cleanup, prepare, probe, AdminSession, ServerFacts};
use gate::StartGate;
pub use merge::merge_workers;
use nodes::Nodes;
pub use schedule::ArrivalSchedule;
use transaction_log::TransactionLog;

/// State every thread of a run shares. Read-only on the hot path except for the cancel flags.
pub struct RunShared {
    pub config: RunConfig,
    /// The target's nodes and how clients are routed over them.
    pub nodes: Nodes,
    /// The target as the result names it (its first URL, without the password).
    target_label: String,
    /// Unmeasured start-up time before the measured window.
    pub ramp: Duration,
    /// Threads of the run.
    pub threads: u32,
    pub workload: Workload,
    pub statements: Vec<Statement>,
    pub seed: u64,
    /// pgbench `-L` (`latency_limit_ms`).
    pub latency_limit: Option<Duration>,
    /// Each thread's per-transaction log file (pgbench `-l`), taken by its thread.
    logs: Vec<Mutex<Option<TransactionLog>>>,
    merger: Arc<Mutex<IntervalMerger>>,
    /// Every thread connected (threads + the coordinator).
    ready: Barrier,
    /// The start is fixed: threads may read it (threads + the coordinator).
    started: Barrier,
    /// A worker of a scaled-out run: connected, waiting for `go` (see [`StartGate`]).
    gate: StartGate,
    start: OnceLock<Instant>,
    cancelled: AtomicBool,
    aborted: AtomicBool,
}

impl RunShared {
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    /// The start of the measured window, fixed by the coordinator before the threads pass the
    /// `started` barrier: now (or the instant `go` named) plus the ramp, which comes first.
    fn start_instant(&self) -> Instant {
        *self
            .start
            .get()
            .expect("the coordinator fixes the start before `started`")
    }

    /// Thread `thread`'s transaction log, if the run keeps one (taken once).
    fn take_log(&self, thread: u32) -> Option<TransactionLog> {
        self.logs
            .get(thread as usize)?
            .lock()
            .expect("log lock")
            .take()
    }

    pub fn dialect(&self) -> Dialect {
        self.nodes.dialect()
    }

    /// The client's own deadline per transaction, when the run has one.
    pub fn transaction_deadline(&self) -> Option<Duration> {
        self.config
            .transaction_timeout_s
            .map(Duration::from_secs_f64)
    }

    pub fn target_label(&self) -> &str {
        &self.target_label
    }

    /// Whether the run keeps figures per node (several nodes, or availability tracked).
    pub fn keeps_nodes(&self) -> bool {
        self.nodes.len() > 1 || self.nodes.availability.is_some()
    }

    /// The node a client (or pooled connection) in `slot` belongs on.
    pub fn home_node(&self, slot: u32) -> usize {
        let id = self.config.client_id(slot);
        let key = match self.nodes.routing() {
            crate::config::Routing::Affinity => self.workload.affinity_key(id),
            _ => u64::from(id),
        };
        self.nodes.home(key)
    }

    /// A new connection for `slot` (on its home node, or the next that will do per the
    /// routing) with the workload's statements prepared on it, and the node it is on.
    pub async fn open_connection(&self, slot: u32) -> Result<(Connection, usize), DbError> {
        let home = self.home_node(slot);
        let (mut conn, node) = self.nodes.connect(home, self.config.protocol).await?;
        conn.prepare(&self.statements).await?;
        self.nodes.count_connection(node);
        Ok((conn, node))
    }

    /// A new connection on node `node` only (a client going back to its home node).
    pub async fn open_on_node(&self, node: usize) -> Result<Connection, DbError> {
        let mut conn = self
            .nodes
            .connect_node_any(node, self.config.protocol)
            .await?;
        conn.prepare(&self.statements).await?;
        self.nodes.count_connection(node);
        Ok(conn)
    }

    /// Connections opened per node (redacted URL), for the result.
    pub fn connections_by_host(&self) -> Vec<(String, u64)> {
        self.nodes
            .labels()
            .iter()
            .cloned()
            .zip(self.nodes.connection_counts())
            .collect()
    }

    /// Connections thread `thread` keeps for its clients to share, when the workload decouples
    /// them: `connections` dealt round-robin over the threads, as clients are.
    pub fn pool_slots(&self, thread: u32) -> Option<Vec<u32>> {
        let connections = self.workload.shared_connections()?;
        if connections >= self.config.clients {
            return None;
        }
        Some(
            (0..connections)
                .filter(|c| c % self.threads == thread)
                .collect(),
        )
    }
}

/// Facts from the setup connection that go into the result.
pub(super) struct Setup {
    pub server_version: String,
    pub tls: bool,
    /// `max_connections` of the server, for the verdict of a run whose clients were refused.
    pub max_connections: Option<u64>,
}

/// The server's connection limit, or None when it cannot be read (not worth failing a run).
async fn max_connections(conn: &mut Connection) -> Option<u64> {
    let sql = match conn.dialect() {
        Dialect::Postgres => "SHOW max_connections",
        Dialect::Mysql => "SELECT @@max_connections",
    };
    let rows = conn.query(sql).await.ok()?;
    rows.first()?.first()?.as_deref()?.trim().parse().ok()
}

/// A run in progress.
pub struct RunningRun {
    shared: Arc<RunShared>,
    done: Arc<(Mutex<bool>, Condvar)>,
    coordinator: Option<JoinHandle<Result<RunResult, Error>>>,
}

/// Checks the target and the data, then starts the run's threads. Errors here (bad config,
/// unreachable server, tables missing) happen before anything is measured.
pub fn start(config: RunConfig) -> Result<RunningRun, Error> {
    let nodes = Nodes::new(&config)?;
    let target_label = config.target.endpoint()?.redacted();
    let seed = config.seed.unwrap_or_else(rand::random);
    let mut workload = Workload::from_config(&config.workload)?;
    workload.bind_run(seed, config.protocol, config.total_clients());
    let statements = workload.statements(nodes.dialect())?;
    let setup = block_on(async {
        let mut conn = nodes.setup_session(config.protocol).await?;
        workload.check(&mut conn).await?;
        workload.check_clients(config.total_clients())?;
        // A scaled-out run's maintenance before the run (pgbench's vacuum) is its first
        // worker's; the others only check.
        if config.share.as_ref().is_none_or(|s| s.first_client == 0) {
            workload.before_run(&mut conn).await?;
        }
        let setup = Setup {
            server_version: conn.server_version().to_string(),
            tls: conn.is_tls(),
            max_connections: max_connections(&mut conn).await,
        };
        conn.close().await;
        Ok::<_, Error>(setup)
    })??;

    // Never more threads than shared connections: each thread needs one.
    let threads = config
        .effective_threads()
        .min(workload.shared_connections().unwrap_or(u32::MAX).max(1));
    let logs = transaction_log::open_all(&config, threads, seed)?
        .into_iter()
        .map(|log| Mutex::new(Some(log)))
        .collect();
    let shared = Arc::new(RunShared {
        latency_limit: config
            .latency_limit_ms
            .map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        logs,
        merger: Arc::new(Mutex::new(
            IntervalMerger::new(config.interval_s, threads as usize, config.duration_s)
                .with_detail(config.keeps_interval_histograms())
                .with_type_names(workload.transaction_types()),
        )),
        ready: Barrier::new(threads as usize + 1),
        started: Barrier::new(threads as usize + 1),
        gate: StartGate::new(config.share.is_some() || config.wait_for_go),
        start: OnceLock::new(),
        cancelled: AtomicBool::new(false),
        aborted: AtomicBool::new(false),
        ramp: Duration::from_secs_f64(config.ramp_s),
        nodes,
        target_label,
        threads,
        config,
        workload,
        statements,
        seed,
    });
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let coordinator = {
        let (shared, done) = (shared.clone(), done.clone());
        std::thread::Builder::new()
            .name("dbscale-run".into())
            .spawn(move || {
                let result = coordinate(&shared, threads, setup);
                let (lock, signal) = &*done;
                *lock.lock().expect("done lock") = true;
                signal.notify_all();
                result
            })
            .map_err(|e| Error::Internal(format!("cannot start the run thread: {e}")))?
    };
    Ok(RunningRun {
        shared,
        done,
        coordinator: Some(coordinator),
    })
}

/// Starts the worker threads, waits for them, and assembles the result.
fn coordinate(shared: &Arc<RunShared>, threads: u32, setup: Setup) -> Result<RunResult, Error> {
    let clients = shared.config.clients;
    let mut handles = Vec::new();
    for t in 0..threads {
        // Round-robin split, like pgbench: client c runs on thread c mod threads.
        let ids: Vec<u32> = (0..clients).filter(|c| c % threads == t).collect();
        let shared = shared.clone();
        let handle = std::thread::Builder::new()
            .name(format!("dbscale-worker-{t}"))
            .spawn(move || worker::run_thread(shared, t, ids))
            .map_err(|e| Error::Internal(format!("cannot start worker thread: {e}")))?;
        handles.push(handle);
    }
    shared.ready.wait();
    let go = shared.gate.connected_then_wait(&shared.cancelled);
    let start = go + shared.ramp;
    shared.start.set(start).expect("the start is fixed once");
    shared.started.wait();
    let cpu_before = cpu::process_cpu();
    let mut totals = Vec::new();
    for handle in handles {
        let thread_totals = handle
            .join()
            .map_err(|_| Error::Internal("a worker thread panicked".into()))??;
        totals.push(thread_totals);
    }
    let cpu = cpu::between(cpu_before, cpu::process_cpu());
    Ok(assemble::assemble(shared, start, totals, cpu, setup))
}

impl RunningRun {
    /// Interval snapshots finished since the last poll.
    pub fn poll(&self) -> Vec<IntervalSnapshot> {
        self.shared.merger.lock().expect("merger lock").drain_new()
    }

    /// Waits up to `timeout`; true once the run has ended.
    pub fn wait(&self, timeout: Duration) -> bool {
        let (lock, signal) = &*self.done;
        let guard = lock.lock().expect("done lock");
        let (guard, _) = signal
            .wait_timeout_while(guard, timeout, |done| !*done)
            .expect("done lock");
        *guard
    }

    /// A worker of a scaled-out run: true once every client has connected and the run waits
    /// for [`RunningRun::go`].
    pub fn is_ready(&self) -> bool {
        self.shared.gate.is_waiting()
    }

    /// A gated run starts its measured window (after its ramp) `delay` from now.
    pub fn go(&self, delay: Duration) {
        self.shared.gate.open(Instant::now() + delay);
    }

    /// Seconds since the measured start (negative before it, during the ramp); None until
    /// the start is fixed (the clients still connecting, a worker waiting for `go`).
    pub fn since_start(&self) -> Option<f64> {
        let start = *self.shared.start.get()?;
        let now = Instant::now();
        Some(if now >= start {
            (now - start).as_secs_f64()
        } else {
            -(start - now).as_secs_f64()
        })
    }

    /// First call: stop at the next transaction boundary. Second call: stop now, abandoning
    /// transactions in flight.
    pub fn cancel(&self) {
        if self.shared.cancelled.swap(true, Ordering::Relaxed) {
            self.shared.aborted.store(true, Ordering::Relaxed);
        }
    }

    /// Waits for the end and returns the result (once).
    pub fn result(&mut self) -> Result<RunResult, Error> {
        let handle = self
            .coordinator
            .take()
            .ok_or_else(|| Error::Internal("the result was already taken".into()))?;
        handle
            .join()
            .map_err(|_| Error::Internal("the run thread panicked".into()))?
    }
}
