//! The thread recorder's tests: intervals, drains, counted runs, errors, per-node figures.

use super::*;
use crate::stats::counts::QueryCounts;

const SECOND: Duration = Duration::from_secs(1);

fn recorder(seconds: u64) -> (ThreadRecorder, Arc<Mutex<IntervalMerger>>, Instant) {
    let merger = Arc::new(Mutex::new(IntervalMerger::new(1.0, 1, seconds as f64)));
    let start = Instant::now();
    let recorder = ThreadRecorder::new(
        2,
        start,
        SECOND,
        SECOND * seconds as u32,
        Arc::clone(&merger),
    );
    (recorder, merger, start)
}

fn outcome(kind: usize, total: u64) -> TxnOutcome {
    TxnOutcome {
        kind,
        queries: QueryCounts {
            read: total,
            total,
            ..Default::default()
        },
        tally: [1, 0, 0, 0, 0, 2],
    }
}

#[test]
fn transactions_land_in_the_interval_of_their_end_and_quiet_ones_are_reported() {
    let (mut rec, merger, start) = recorder(3);
    let ms = Duration::from_millis;
    rec.success(&outcome(0, 3), ms(2), start + ms(100), 1, 0);
    rec.success(&outcome(1, 3), ms(4), start + ms(900), 1, 0);
    rec.success(&outcome(0, 3), ms(8), start + ms(2500), 1, 0);
    rec.close(None);
    let mut merger = merger.lock().unwrap();
    merger.finish(3.0);
    let counts: Vec<u64> = merger.all().iter().map(|i| i.transactions).collect();
    assert_eq!(counts, [2, 0, 1], "second 2 had none and is still reported");
    assert_eq!(merger.all()[0].queries.total, 6);
    assert_eq!(rec.totals.types[0].latency.count(), 2);
    assert_eq!(rec.totals.types[1].latency.count(), 1);
    assert_eq!(rec.totals.counts.queries.total, 9);
    assert_eq!(rec.totals.last_end, Some(start + ms(2500)));
    assert_eq!(rec.totals.tally, [3, 0, 0, 0, 0, 6]);
}

#[test]
fn ends_past_the_window_go_to_the_drain_not_the_last_second() {
    let (mut rec, merger, start) = recorder(2);
    rec.success(&outcome(0, 1), SECOND / 100, start + SECOND * 5, 1, 0);
    rec.close(None);
    let mut merger = merger.lock().unwrap();
    merger.finish(5.0);
    let counts: Vec<(u64, bool)> = merger
        .all()
        .iter()
        .map(|i| (i.transactions, i.drain))
        .collect();
    assert_eq!(counts, [(0, false), (0, false), (1, true)]);
    assert_eq!(merger.all()[2].t_s, 5.0);
}

#[test]
fn a_counted_run_hands_in_its_intervals_up_to_its_end_only() {
    // The time limit is 3 s; the clients were done 1.5 s in.
    let (mut rec, merger, start) = recorder(3);
    rec.success(&outcome(0, 1), SECOND / 100, start + SECOND / 2, 1, 0);
    rec.success(&outcome(0, 1), SECOND / 100, start + SECOND * 3 / 2, 1, 0);
    rec.close(Some(start + SECOND * 3 / 2));
    let mut merger = merger.lock().unwrap();
    merger.finish(1.5);
    let ends: Vec<(u64, f64, f64)> = merger
        .all()
        .iter()
        .map(|i| (i.transactions, i.t_s, i.tps))
        .collect();
    assert_eq!(ends, [(1, 1.0, 1.0), (1, 1.5, 2.0)]);
}

#[test]
fn retries_failures_and_errors_are_counted_apart() {
    let (mut rec, merger, start) = recorder(1);
    let at = start + SECOND / 2;
    rec.error(&DbError::sql("40P01", "deadlock detected"), at);
    rec.error(&DbError::sql("40P01", "another   deadlock\n"), at);
    rec.success(&outcome(0, 1), SECOND / 100, at, 3, 0);
    rec.error(&DbError::sql("40001", "could not serialize access"), at);
    rec.failure(1, at, 2, 0);
    rec.close(None);
    let totals = &rec.totals;
    assert_eq!(
        (
            totals.counts.retried,
            totals.counts.retries,
            totals.counts.failed
        ),
        (1, 3, 1)
    );
    assert_eq!(totals.types[1].failed, 1);
    assert_eq!(totals.errors[&ErrorClass::Deadlock], 2);
    assert_eq!(totals.errors[&ErrorClass::Serialization], 1);
    // The first message of each class is kept, on one line.
    assert_eq!(
        totals.error_messages[&ErrorClass::Deadlock],
        "deadlock detected"
    );
    assert_eq!(one_line("a  b\nc", 3), "a b...");
    let mut merger = merger.lock().unwrap();
    merger.finish(1.0);
    let interval = &merger.all()[0];
    assert_eq!(
        (interval.transactions, interval.failed, interval.errors),
        (1, 1, 3)
    );
}

#[test]
fn each_node_counts_in_the_interval_of_its_transactions_end() {
    let (rec, merger, start) = recorder(2);
    let mut rec = rec.with_nodes(2, true);
    let ms = Duration::from_millis;
    rec.success(&outcome(0, 1), ms(3), start + ms(100), 1, 1);
    rec.success(&outcome(0, 1), ms(5), start + ms(1500), 1, 0);
    rec.success(&outcome(0, 1), ms(7), start + ms(1600), 1, 0);
    rec.failure(0, start + ms(1700), 1, 1);
    rec.failover(1, start + ms(1800));
    rec.close(None);
    let mut merger = merger.lock().unwrap();
    merger.finish(2.0);
    let by_node: Vec<Vec<u64>> = merger.all().iter().map(|i| i.by_node.clone()).collect();
    assert_eq!(by_node, [vec![0, 1], vec![2, 0]]);
    let failovers: Vec<u64> = merger.all().iter().map(|i| i.failovers).collect();
    assert_eq!(failovers, [0, 1]);
    assert_eq!(rec.totals.nodes[1].failovers, 1);
    let nodes = &rec.totals.nodes;
    assert_eq!((nodes[0].latency.count(), nodes[1].latency.count()), (2, 1));
    assert_eq!((nodes[0].failed, nodes[1].failed), (0, 1));
}

#[test]
fn schedule_lag_counts_late_starts_over_one_millisecond() {
    let (mut rec, _merger, _start) = recorder(1);
    for micros in [200, 1000, 1001, 50_000] {
        rec.schedule_lag(Duration::from_micros(micros));
    }
    assert_eq!(rec.totals.counts.late_starts, 2);
    assert_eq!(rec.totals.lag.count(), 4);
    assert_eq!(rec.current.lag_max_us, 50_000);
    assert_eq!(rec.current.lag_sum_us, 52_201);
}

#[test]
fn type_histograms_are_kept_per_interval_only_when_asked() {
    let ms = Duration::from_millis;
    // What the recorder hands in carries the types apart.
    let (rec, _, start) = recorder(2);
    let mut rec = rec.with_type_histograms(true);
    rec.success(&outcome(1, 1), ms(900), start + ms(100), 1, 0);
    rec.success(&outcome(0, 1), ms(3), start + ms(200), 1, 0);
    let counts: Vec<u64> = rec
        .current
        .latency_by_type
        .iter()
        .map(|h| h.count())
        .collect();
    assert_eq!(counts, [1, 1]);
    let (rec, _, start) = recorder(2);
    let mut rec = rec.with_type_histograms(false);
    rec.success(&outcome(1, 1), ms(900), start + ms(100), 1, 0);
    assert!(
        rec.current.latency_by_type.is_empty(),
        "nothing per type unless asked"
    );
}
