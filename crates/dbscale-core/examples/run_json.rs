//! Runs one configuration without Python, for profiling the engine alone:
//! `cargo run --release --example run_json -- '{"target":{"url":"..."},"workload":{"name":"tpcb"},"clients":8}'`
//! Prints the result without histograms and intervals.

fn main() {
    let text = std::env::args()
        .nth(1)
        .expect("usage: run_json CONFIG_JSON");
    let config = dbscale_core::RunConfig::from_json(&text).unwrap_or_else(|e| panic!("{e}"));
    let mut run =
        dbscale_core::engine::start(config).unwrap_or_else(|e| panic!("{e}\nhint: {}", e.hint()));
    let mut result =
        serde_json::to_value(run.result().unwrap_or_else(|e| panic!("{e}"))).expect("serializable");
    let object = result.as_object_mut().expect("an object");
    for key in ["histogram", "intervals", "transaction_types"] {
        object.remove(key);
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&result).expect("serializable")
    );
}
