use super::*;

fn piece(txns: u64, latency_us: u64) -> IntervalStats {
    let mut s = IntervalStats {
        transactions: txns,
        ..Default::default()
    };
    for _ in 0..txns {
        s.latency.record_us(latency_us);
    }
    s
}

#[test]
fn interval_is_final_only_when_every_thread_reported() {
    let mut m = IntervalMerger::new(1.0, 2, 10.0);
    m.submit(0, piece(10, 1000));
    assert!(m.drain_new().is_empty());
    m.submit(0, piece(30, 3000));
    let done = m.drain_new();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].transactions, 40);
    assert_eq!(done[0].tps, 40.0);
    assert!((done[0].latency_ms.unwrap().p50 - 3.0).abs() < 0.01);
    assert!(m.drain_new().is_empty(), "each snapshot is polled once");
}

#[test]
fn each_second_counts_its_types_and_error_classes_by_name() {
    let names = vec!["new_order".to_string(), "payment".to_string()];
    let mut m = IntervalMerger::new(1.0, 2, 10.0).with_type_names(names.clone());
    let mut a = piece(3, 1000);
    for kind in [0, 1, 1] {
        IntervalStats::count_type(&mut a.by_type, kind);
    }
    IntervalStats::count_type(&mut a.failed_by_type, 1);
    a.errors_by_class.insert("deadlock".into(), 2);
    let mut b = piece(1, 1000);
    IntervalStats::count_type(&mut b.by_type, 0);
    b.errors_by_class.insert("deadlock".into(), 1);
    m.submit(0, a);
    m.submit(0, b);
    let [done] = &m.drain_new()[..] else {
        panic!("one interval")
    };
    let counts = |pairs: &[(&str, u64)]| -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    assert_eq!(done.by_type, counts(&[("new_order", 2), ("payment", 2)]));
    assert_eq!(done.failed_by_type, counts(&[("payment", 1)]));
    assert_eq!(done.errors_by_class, counts(&[("deadlock", 3)]));
    // A worker's interval merges again by name (scale-out).
    let mut again = done.clone();
    again.detail = Some(IntervalDetail {
        index: 0,
        histogram: LatencyHistogram::default().to_base64(),
        lag_sum_us: 0,
        lag_max_us: 0,
        lag_count: 0,
        histograms_by_type: BTreeMap::new(),
    });
    let (_, stats) = again.to_stats(&names).unwrap();
    assert_eq!(
        (stats.by_type, stats.failed_by_type),
        (vec![2, 2], vec![0, 1])
    );
    assert!(
        again.to_stats(&names[..1]).is_err(),
        "an unknown type is an error"
    );
}

#[test]
fn finish_closes_a_partial_last_interval_with_its_true_width() {
    let mut m = IntervalMerger::new(1.0, 2, 1.5);
    m.submit(0, piece(10, 1000));
    m.submit(0, piece(10, 1000));
    m.submit(1, piece(5, 1000));
    m.finish(1.5);
    let all = m.all();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].t_s, 1.5);
    assert_eq!(all[1].tps, 10.0);
}

#[test]
fn the_drain_is_its_own_marked_interval_not_the_last_seconds() {
    let mut m = IntervalMerger::new(1.0, 1, 2.0);
    m.submit(0, piece(100, 1000));
    m.submit(1, piece(100, 1000));
    m.submit(2, piece(40, 900_000)); // ended after the 2 s window
    assert_eq!(m.drain_new().len(), 2, "the drain waits for the run's end");
    m.finish(2.2);
    let all = m.all();
    assert_eq!(all.len(), 3);
    assert!(!all[1].drain && all[1].t_s == 2.0 && all[1].transactions == 100);
    assert!(
        all[1].latency_ms.unwrap().p99 < 2.0,
        "the drain's slow tail stays out"
    );
    assert!(all[2].drain && all[2].t_s == 2.2 && all[2].transactions == 40);
    let mut quiet = IntervalMerger::new(1.0, 1, 1.0);
    quiet.submit(0, piece(10, 1000));
    quiet.submit(1, IntervalStats::default());
    quiet.finish(1.0);
    assert_eq!(quiet.all().len(), 1, "an empty drain is not an interval");
}

#[test]
fn each_type_keeps_its_own_histogram_through_merge_and_detail() {
    let names = vec!["new_order".to_string(), "q1".to_string()];
    let mut m = IntervalMerger::new(1.0, 2, 10.0)
        .with_type_names(names.clone())
        .with_detail(true);
    let mut a = piece(2, 1000);
    IntervalStats::record_type(&mut a.latency_by_type, 0, 1000);
    IntervalStats::record_type(&mut a.latency_by_type, 1, 2_000_000);
    let mut b = piece(1, 3000);
    IntervalStats::record_type(&mut b.latency_by_type, 0, 3000);
    m.submit(0, a);
    m.submit(0, b);
    let [done] = &m.drain_new()[..] else {
        panic!("one interval")
    };
    let detail = done.detail.as_ref().expect("kept");
    assert_eq!(
        detail.histograms_by_type.keys().collect::<Vec<_>>(),
        ["new_order", "q1"]
    );
    let terminal = LatencyHistogram::from_base64(&detail.histograms_by_type["new_order"]).unwrap();
    assert_eq!(
        terminal.count(),
        2,
        "the terminal's own two, not the query's"
    );
    assert!(terminal.summary().unwrap().max < 4.0);
    // Merged again (a scaled-out worker's interval), the histograms stay by type.
    let (_, stats) = done.to_stats(&names).unwrap();
    assert_eq!(stats.latency_by_type.len(), 2);
    assert_eq!(stats.latency_by_type[1].count(), 1);
    assert!(
        done.to_stats(&names[..1]).is_err(),
        "an unknown type is an error"
    );
    // Without the detail asked for, nothing per type is serialized.
    let mut plain = IntervalMerger::new(1.0, 1, 10.0).with_type_names(names);
    plain.submit(0, piece(1, 1000));
    assert!(plain.drain_new()[0].detail.is_none());
}
