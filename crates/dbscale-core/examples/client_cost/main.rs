//! The client's cost per transaction, counted where a noisy machine cannot move it: dbscale's
//! engine runs one client for N transactions against a scripted server in this same process
//! (PostgreSQL or MySQL protocol, `answers.rs`), so valgrind's callgrind can count the engine
//! thread's instructions. `tests/bench_guard` runs it at two N and takes the difference per
//! transaction (start-up and connect cancel out).
//!
//! `client_cost WORKLOAD postgresql|mysql TRANSACTIONS [simple|prepared [CLIENTS]]`: TRANSACTIONS
//! per client; several clients share the one engine thread (its batched sends and direct waits).

mod answers;
mod mysql_server;
mod pg_server;

use std::net::TcpListener;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, workload, dialect, transactions, rest @ ..] = args.as_slice() else {
        panic!(
            "usage: client_cost WORKLOAD postgresql|mysql TRANSACTIONS [simple|prepared [CLIENTS]]"
        );
    };
    let protocol = rest.first().map_or("prepared", String::as_str);
    let clients: u32 = rest
        .get(1)
        .map_or(1, |c| c.parse().expect("CLIENTS: a number"));
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let url = match dialect.as_str() {
        "postgresql" => {
            std::thread::spawn(move || pg_server::serve(listener));
            format!("postgresql://bench@127.0.0.1:{port}/bench?sslmode=disable")
        }
        "mysql" => {
            std::thread::spawn(move || mysql_server::serve(listener));
            format!("mysql://bench@127.0.0.1:{port}/bench?sslmode=disable")
        }
        other => panic!("dialect {other}: postgresql or mysql"),
    };
    // pgbench's maintenance before a run has nothing to do here.
    let params = if workload.starts_with("tpcb") {
        serde_json::json!({"vacuum": false})
    } else {
        serde_json::json!({})
    };
    let config = serde_json::json!({
        "target": {"url": url},
        "workload": {"name": workload, "params": params},
        "clients": clients,
        "threads": 1,
        "protocol": protocol,
        "transactions": transactions.parse::<u64>().expect("TRANSACTIONS: a number"),
        "duration_s": 3600.0,
        // One interval: its per-second histograms would count time, not transactions.
        "interval_s": 3600.0,
        // DBSCALE_STATEMENT_TIMING=1: what timing each statement on the client costs.
        "statement_timing": std::env::var("DBSCALE_STATEMENT_TIMING").is_ok_and(|v| v == "1"),
    });
    let config =
        dbscale_core::RunConfig::from_json(&config.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let mut run =
        dbscale_core::engine::start(config).unwrap_or_else(|e| panic!("{e}\nhint: {}", e.hint()));
    let result = run.result().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} transactions, {} failed",
        result.transactions, result.failed
    );
}
