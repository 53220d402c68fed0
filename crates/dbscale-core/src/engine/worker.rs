//! One engine thread: a single-threaded tokio event loop running its share of the clients, like
//! pgbench's `-j` threads. Single-threaded loops avoid work-stealing overhead and cross-thread
//! wake-ups on the hot path. The clients run as one `ClientSet`, which waits for their servers
//! in one `epoll_wait` on the thread's own epoll instead of tokio's reactor whenever all of them
//! are waiting.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;
use tokio::task::LocalSet;

use super::client::{Client, ConnectState, HOME_CHECK};
use super::client_set::{ClientFuture, ClientSet};
use super::pool::ConnectionPool;
use super::recorder::{ThreadRecorder, ThreadTotals};
use super::schedule::ArrivalSchedule;
use super::sessions::OpenSessions;
use super::RunShared;
use crate::driver::{direct_wait, statement_clock, ConnectMode, Connection, DbError};
use crate::Error;

/// After the deadline, how long transactions still running may take before they are abandoned.
const GRACE: Duration = Duration::from_secs(10);

/// A connection opened before the run, with its node and the time it took, or why it could
/// not be.
type Opened = Result<(Connection, usize, Duration), DbError>;

/// Runs `client_ids` on this thread; returns what it measured. Never inlined: called once per
/// thread, and the client-cost guard (tests/bench_guard) finds the worker's profile by its name.
#[inline(never)]
pub fn run_thread(
    shared: Arc<RunShared>,
    thread_index: u32,
    client_ids: Vec<u32>,
) -> Result<ThreadTotals, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start an event loop: {e}")))?;
    let local = LocalSet::new();
    let opened = local.block_on(
        &runtime,
        open_before_start(&shared, thread_index, &client_ids),
    );
    shared.ready.wait();
    shared.started.wait(); // the coordinator has fixed the start (after `go` when gated)
    let plan = ThreadPlan::new(
        &shared,
        thread_index,
        &client_ids,
        opened.pool_slots.clone(),
    );
    // Closed model: reads wait in the thread's own epoll while every client waits
    // (client_set.rs). In the open model clients mostly sleep on timers, which tokio keeps.
    direct_wait::set_enabled(shared.config.rate_tps.is_none())
        .map_err(|e| Error::Internal(format!("cannot create an epoll instance: {e}")))?;
    // Each statement timed, when asked (a script's SQL commands too: beside their `-r` sums,
    // the statements get histograms).
    let timed = shared.config.statement_timing;
    if timed {
        statement_clock::enable(shared.statements.len());
    }
    local.block_on(&runtime, drive(&shared, &plan, &client_ids, opened));
    let _ = direct_wait::set_enabled(false);
    let clock = statement_clock::take();
    // Dropping the event loop drops any transaction still running.
    drop(local);
    let mut recorder = Rc::try_unwrap(plan.recorder)
        .map_err(|_| Error::Internal("client tasks outlived their thread".into()))?
        .into_inner();
    recorder.totals.counts.abandoned = recorder.in_flight;
    if timed {
        for (index, (tally, histogram)) in clock.tallies.iter().zip(&clock.histograms).enumerate() {
            recorder.totals.statements.add(index, tally, histogram);
        }
    }
    if let Some(schedule) = plan.schedule {
        recorder.totals.counts.unstarted +=
            schedule.borrow_mut().count_remaining_before(plan.deadline);
    }
    // A counted run ends when its clients are done, a cancelled one when it stopped: its
    // intervals end there, not at the time limit (a cancelled 60 s run kept 55 empty seconds
    // after its stop; a cancelled counted run, whose limit is far off, handed in seconds for
    // hours after a hard stop).
    let stopped = shared.config.transactions.is_some() || shared.is_cancelled();
    recorder.close(stopped.then(Instant::now));
    recorder.finish_log();
    Ok(recorder.totals)
}

/// The connections opened before the common start: the pool's (clients sharing connections),
/// or each client's own in client order (persistent connections), or none (one per
/// transaction).
struct OpenedBeforeStart {
    pool_slots: Option<Vec<u32>>,
    pooled: Vec<(u32, Opened)>,
    initial: Vec<Option<Opened>>,
}

/// Connects first, so the measured period starts with every client ready (pgbench reports tps
/// "without initial connection time" the same way).
async fn open_before_start(
    shared: &RunShared,
    thread_index: u32,
    client_ids: &[u32],
) -> OpenedBeforeStart {
    let persistent = shared.config.connect == ConnectMode::Persistent;
    let pool_slots = shared.pool_slots(thread_index);
    let opens: Vec<u32> = match &pool_slots {
        Some(slots) => slots.clone(),
        None if persistent => client_ids.to_vec(),
        None => Vec::new(),
    };
    let mut pooled: Vec<(u32, Opened)> = Vec::new();
    for slot in opens {
        let begun = Instant::now();
        let opened = shared
            .open_connection(slot)
            .await
            .map(|(conn, node)| (conn, node, begun.elapsed()));
        pooled.push((slot, opened));
    }
    let mut initial: Vec<Option<Opened>> = client_ids.iter().map(|_| None).collect();
    if pool_slots.is_none() && persistent {
        initial = pooled.drain(..).map(|(_, opened)| Some(opened)).collect();
    }
    OpenedBeforeStart {
        pool_slots,
        pooled,
        initial,
    }
}

/// The thread's timing and shared state once the start is fixed.
struct ThreadPlan {
    start: Instant,
    deadline: Instant,
    interval: Duration,
    ramp_start: Instant,
    pool: Option<Rc<ConnectionPool>>,
    recorder: Rc<RefCell<ThreadRecorder>>,
    schedule: Option<Rc<RefCell<ArrivalSchedule>>>,
    sessions: Rc<OpenSessions>,
}

impl ThreadPlan {
    fn new(
        shared: &RunShared,
        thread_index: u32,
        client_ids: &[u32],
        pool_slots: Option<Vec<u32>>,
    ) -> Self {
        let start = shared.start_instant();
        let duration = Duration::from_secs_f64(shared.config.duration_s);
        let interval = Duration::from_secs_f64(shared.config.interval_s);
        let mut recorder = ThreadRecorder::new(
            shared.workload.transaction_types().len(),
            start,
            interval,
            duration,
            shared.merger.clone(),
        )
        .with_latency_limit(shared.latency_limit)
        .with_nodes(shared.nodes.len(), shared.keeps_nodes())
        .with_type_histograms(shared.config.keeps_interval_histograms());
        recorder.log = shared.take_log(thread_index);
        let recorder = Rc::new(RefCell::new(recorder));
        let schedule = shared.config.rate_tps.map(|rate| {
            let share = rate * client_ids.len() as f64 / shared.config.clients as f64;
            Rc::new(RefCell::new(ArrivalSchedule::new(
                start,
                share,
                shared.seed ^ (0x5EED_0000 + u64::from(thread_index)),
            )))
        });
        Self {
            start,
            deadline: start + duration,
            interval,
            ramp_start: start - shared.ramp,
            pool: pool_slots.map(|slots| Rc::new(ConnectionPool::new(slots))),
            recorder,
            schedule,
            sessions: Rc::default(),
        }
    }
}

/// Runs the thread's clients as one client set until they end or the hard stop.
async fn drive(
    shared: &Arc<RunShared>,
    plan: &ThreadPlan,
    client_ids: &[u32],
    opened: OpenedBeforeStart,
) {
    if let Some(pool) = &plan.pool {
        for (slot, opened) in opened.pooled {
            match opened {
                Ok((conn, node, took)) => {
                    plan.recorder.borrow_mut().connected(took);
                    pool.add(conn, slot, node);
                }
                Err(error) => plan
                    .recorder
                    .borrow_mut()
                    .connect_failed(&error, plan.start),
            }
        }
    }
    let clients: Vec<ClientFuture> = client_ids
        .iter()
        .zip(opened.initial)
        .map(|(client_id, opened)| {
            Box::pin(client_for(shared, plan, *client_id, opened).run()) as ClientFuture
        })
        .collect();
    let ticker = tokio::task::spawn_local(tick_intervals(
        plan.recorder.clone(),
        plan.start,
        plan.interval,
        plan.deadline,
    ));
    let stopped_hard = tokio::select! {
        _ = ClientSet::new(clients) => false,
        _ = hard_stop(shared, plan.deadline + GRACE) => true,
    };
    ticker.abort();
    if stopped_hard {
        plan.sessions.cancel_all(&shared.nodes).await;
    }
    if let Some(pool) = &plan.pool {
        pool.close().await;
    }
}

/// One client with the connection opened for it before the start (if any).
fn client_for(
    shared: &Arc<RunShared>,
    plan: &ThreadPlan,
    client_id: u32,
    opened: Option<Opened>,
) -> Client {
    let mut connect_state = ConnectState::Untried;
    let mut node = shared.home_node(client_id);
    let conn = match opened {
        Some(Ok((conn, on, took))) => {
            let mut recorder = plan.recorder.borrow_mut();
            recorder.connected(took);
            connect_state.note(&mut recorder, None);
            node = on;
            Some(conn)
        }
        // The client keeps trying to connect during the run; the failure counts.
        Some(Err(error)) => {
            connect_state.note(&mut plan.recorder.borrow_mut(), Some((&error, plan.start)));
            None
        }
        None => None,
    };
    let whole_run_id = shared.config.client_id(client_id);
    if let Some(conn) = &conn {
        plan.sessions.opened(whole_run_id, node, conn);
    }
    Client {
        shared: shared.clone(),
        recorder: plan.recorder.clone(),
        schedule: plan.schedule.clone(),
        conn,
        pool: plan.pool.clone(),
        slot: client_id,
        node,
        lost_from: None,
        next_home_check: plan.start,
        home_check_every: HOME_CHECK,
        workload: shared
            .workload
            .client(whole_run_id, shared.config.total_clients()),
        rng: SmallRng::seed_from_u64(client_seed(shared.seed, client_id)),
        // Clients start one after another over the ramp, over a scaled-out run's whole set of
        // clients, so workers' ramps interleave.
        begin_at: plan.ramp_start
            + shared
                .ramp
                .mul_f64(f64::from(whole_run_id) / f64::from(shared.config.total_clients())),
        deadline: plan.deadline,
        connect_state,
        sessions: plan.sessions.clone(),
        id: whole_run_id,
        number: 0,
    }
}

/// Hands in quiet intervals at each boundary so progress never stalls on an idle thread.
async fn tick_intervals(
    recorder: Rc<RefCell<ThreadRecorder>>,
    start: Instant,
    interval: Duration,
    deadline: Instant,
) {
    let mut next = start + interval;
    while next <= deadline {
        tokio::time::sleep_until(next.into()).await;
        recorder.borrow_mut().tick(Instant::now());
        next += interval;
    }
}

/// Resolves when the run must stop even with transactions in flight: a second cancel, or the
/// grace period after the deadline.
async fn hard_stop(shared: &RunShared, limit: Instant) {
    loop {
        if shared.is_aborted() || Instant::now() >= limit {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Independent, reproducible per-client seeds (SplitMix64 of seed and client id).
fn client_seed(seed: u64, client_id: u32) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(u64::from(client_id) + 1));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
