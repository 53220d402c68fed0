//! `dbscale._core`: the thin binding between the Python package and dbscale-core. Each function
//! converts its JSON argument, releases the GIL, delegates, and maps errors (see errors.rs).

mod errors;

use std::time::Duration;

use dbscale_core::engine::{self, AdminSession, RunningRun};
use dbscale_core::stats::stored;
use dbscale_core::RunConfig;
use pyo3::prelude::*;

use errors::{to_py_err, CoreError};

fn parse_config(config_json: &str) -> PyResult<RunConfig> {
    RunConfig::from_json(config_json).map_err(to_py_err)
}

fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value)
        .map_err(|e| CoreError::new_err(("internal", e.to_string(), "this is a dbscale bug")))
}

/// A run going on in native threads.
#[pyclass(module = "dbscale._core")]
struct RunHandle {
    run: RunningRun,
}

#[pymethods]
impl RunHandle {
    /// JSON list of the interval snapshots finished since the last poll.
    fn poll(&self, py: Python<'_>) -> PyResult<String> {
        let snapshots = py.allow_threads(|| self.run.poll());
        to_json(&snapshots)
    }

    /// Blocks up to `timeout_s`; True once the run has ended.
    fn wait(&self, py: Python<'_>, timeout_s: f64) -> bool {
        let timeout = Duration::from_secs_f64(timeout_s.max(0.0));
        py.allow_threads(|| self.run.wait(timeout))
    }

    /// A scaled-out run's worker: True once its clients are connected and it waits for `go`.
    fn ready(&self) -> bool {
        self.run.is_ready()
    }

    /// A scaled-out run's worker starts `delay_s` from now (its measured window after its ramp).
    fn go(&self, delay_s: f64) {
        self.run.go(Duration::from_secs_f64(delay_s.max(0.0)));
    }

    /// Seconds since the measured start (negative during the ramp); None until it is fixed.
    fn since_start(&self) -> Option<f64> {
        self.run.since_start()
    }

    /// First call stops at the next transaction boundary; a second abandons transactions in flight.
    fn cancel(&self) {
        self.run.cancel();
    }

    /// Blocks until the run ends and returns its result as JSON.
    fn result(&mut self, py: Python<'_>) -> PyResult<String> {
        // Wait in short slices so Ctrl-C reaches Python while the run winds down.
        while !py.allow_threads(|| self.run.wait(Duration::from_millis(200))) {
            py.check_signals()?;
        }
        let result = py.allow_threads(|| self.run.result()).map_err(to_py_err)?;
        to_json(&result)
    }
}

/// One connection for queries outside the measured loop (server statistics, checks).
#[pyclass(module = "dbscale._core")]
struct Session {
    session: AdminSession,
}

#[pymethods]
impl Session {
    /// `timeout_s`: how long opening the session and each query may take (None: no limit).
    #[new]
    #[pyo3(signature = (config_json, timeout_s=None))]
    fn new(py: Python<'_>, config_json: &str, timeout_s: Option<f64>) -> PyResult<Self> {
        let config = parse_config(config_json)?;
        let limit = timeout_s.map(|s| Duration::from_secs_f64(s.max(0.001)));
        let session = py
            .allow_threads(|| AdminSession::open_within(&config, limit))
            .map_err(to_py_err)?;
        Ok(Self { session })
    }

    /// Runs SQL text; JSON list of rows, each a list of text values or null.
    fn query(&mut self, py: Python<'_>, sql: &str) -> PyResult<String> {
        let rows = py
            .allow_threads(|| self.session.query(sql))
            .map_err(to_py_err)?;
        to_json(&rows)
    }

    fn close(&mut self, py: Python<'_>) {
        py.allow_threads(|| self.session.close());
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The core's contract: JSON Schemas of the run configuration, the run result and every other
/// answer, and the list of error kinds (`dbscale_core::contract`).
#[pyfunction]
fn contract() -> PyResult<String> {
    to_json(&dbscale_core::contract::contract())
}

/// JSON catalog of workloads and their parameters.
#[pyfunction]
fn workloads() -> PyResult<String> {
    let catalog: serde_json::Map<String, serde_json::Value> = dbscale_core::workload::catalog()
        .into_iter()
        .map(|w| {
            (
                w.name.to_string(),
                serde_json::to_value(&w).unwrap_or_default(),
            )
        })
        .collect();
    to_json(&catalog)
}

/// Builds a workload from its configuration alone (no connection): a script that does not
/// parse, an unknown parameter or name is refused before anything runs.
#[pyfunction]
fn check_workload(workload_json: &str) -> PyResult<()> {
    let config: dbscale_core::config::WorkloadConfig = serde_json::from_str(workload_json)
        .map_err(|e| {
            to_py_err(dbscale_core::Error::Config(format!(
                "invalid workload: {e}"
            )))
        })?;
    dbscale_core::workload::Workload::from_config(&config).map_err(to_py_err)?;
    Ok(())
}

#[pyfunction]
fn start_run(py: Python<'_>, config_json: &str) -> PyResult<RunHandle> {
    let config = parse_config(config_json)?;
    let run = py
        .allow_threads(|| engine::start(config))
        .map_err(to_py_err)?;
    Ok(RunHandle { run })
}

#[pyfunction]
fn prepare(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let config = parse_config(config_json)?;
    let summary = py
        .allow_threads(|| engine::prepare(&config))
        .map_err(to_py_err)?;
    to_json(&summary)
}

#[pyfunction]
fn cleanup(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let config = parse_config(config_json)?;
    let summary = py
        .allow_threads(|| engine::cleanup(&config))
        .map_err(to_py_err)?;
    to_json(&summary)
}

/// The workload's consistency conditions on the target's data (`dbscale check`).
#[pyfunction]
#[pyo3(signature = (config_json, timeout_s=None))]
fn check(py: Python<'_>, config_json: &str, timeout_s: Option<f64>) -> PyResult<String> {
    let config = parse_config(config_json)?;
    let limit = timeout_s.map(|s| Duration::from_secs_f64(s.max(0.001)));
    let report = py
        .allow_threads(|| engine::check_within(&config, limit))
        .map_err(to_py_err)?;
    to_json(&report)
}

#[pyfunction]
fn probe(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let config = parse_config(config_json)?;
    let facts = py
        .allow_threads(|| engine::probe(&config))
        .map_err(to_py_err)?;
    to_json(&facts)
}

/// Stored histograms merged exactly: JSON `{"count", "min", "mean", "stddev", "max", "values"}`
/// in milliseconds, `values` at `quantiles`.
#[pyfunction]
fn histogram_figures(py: Python<'_>, blobs: Vec<String>, quantiles: Vec<f64>) -> PyResult<String> {
    let figures = py
        .allow_threads(|| {
            let merged = stored::merge_encoded(blobs.iter().map(String::as_str))?;
            stored::figures(&merged, &quantiles)
        })
        .map_err(to_py_err)?;
    to_json(&figures)
}

/// Each stored histogram's count and its counts over `limits_ms`: JSON `[{"count", "above"}]`.
#[pyfunction]
fn histogram_counts_above(
    py: Python<'_>,
    blobs: Vec<String>,
    limits_ms: Vec<f64>,
) -> PyResult<String> {
    let counts = py
        .allow_threads(|| stored::counts_above(blobs.iter().map(String::as_str), &limits_ms))
        .map_err(to_py_err)?;
    to_json(&counts)
}

/// Stored histograms merged exactly into one, encoded the same way.
#[pyfunction]
fn merge_histograms(py: Python<'_>, blobs: Vec<String>) -> PyResult<String> {
    py.allow_threads(|| stored::merge_encoded(blobs.iter().map(String::as_str)))
        .map(|merged| merged.to_base64())
        .map_err(to_py_err)
}

/// The CPU micro-benchmark (`dbscale_core::micro::cpu`): JSON `{"threads", "seconds"}` in,
/// the score as JSON out.
/// One result from a scaled-out run's worker results (JSON each), for the whole run's config.
#[pyfunction]
fn merge_worker_results(
    py: Python<'_>,
    config_json: &str,
    results: Vec<String>,
) -> PyResult<String> {
    let config = parse_config(config_json)?;
    let parts = results
        .iter()
        .map(|text| serde_json::from_str(text))
        .collect::<Result<Vec<dbscale_core::stats::RunResult>, _>>()
        .map_err(|e| {
            CoreError::new_err((
                "internal",
                format!("a worker's result: {e}"),
                "this is a dbscale bug",
            ))
        })?;
    let merged = py
        .allow_threads(|| engine::merge_workers(&config, &parts))
        .map_err(to_py_err)?;
    to_json(&merged)
}

#[pyfunction]
fn micro_cpu(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let config: dbscale_core::micro::cpu::CpuConfig = serde_json::from_str(config_json)
        .map_err(|e| to_py_err(dbscale_core::Error::Config(format!("micro cpu: {e}"))))?;
    let score = py
        .allow_threads(|| dbscale_core::micro::cpu::run(&config))
        .map_err(to_py_err)?;
    to_json(&score)
}

/// `dbscale micro net --serve`: a running server; `stop()` ends it (so does dropping it).
#[pyclass(module = "dbscale._core")]
struct NetServer {
    server: dbscale_core::micro::net::NetServer,
}

#[pymethods]
impl NetServer {
    #[new]
    fn new(bind: &str, port: u16) -> PyResult<Self> {
        let server = dbscale_core::micro::net::serve(bind, port).map_err(to_py_err)?;
        Ok(Self { server })
    }

    fn addr(&self) -> String {
        self.server.addr().to_string()
    }

    fn stop(&mut self, py: Python<'_>) {
        py.allow_threads(|| self.server.stop());
    }
}

/// One-byte request/response against a `micro net` server for `seconds`: JSON figures.
#[pyfunction]
fn micro_net_rr(py: Python<'_>, addr: &str, seconds: f64) -> PyResult<String> {
    let result = py
        .allow_threads(|| dbscale_core::micro::net::request_response(addr, seconds))
        .map_err(to_py_err)?;
    to_json(&result)
}

/// `streams` parallel streams to a `micro net` server for `seconds`: JSON figures.
#[pyfunction]
fn micro_net_streams(
    py: Python<'_>,
    addr: &str,
    streams: usize,
    seconds: f64,
    buffer_bytes: usize,
) -> PyResult<String> {
    let result = py
        .allow_threads(|| dbscale_core::micro::net::streams(addr, streams, seconds, buffer_bytes))
        .map_err(to_py_err)?;
    to_json(&result)
}

/// The report's stream-count pick on `history` of (streams, Gbit/s): the count, or None.
#[pyfunction]
fn pick_stream_count(history: Vec<(usize, f64)>, threshold_gbps: f64, cap: usize) -> Option<usize> {
    dbscale_core::micro::net::pick_stream_count(&history, threshold_gbps, cap)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoreError", m.py().get_type::<CoreError>())?;
    m.add_class::<RunHandle>()?;
    m.add_class::<Session>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(contract, m)?)?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(start_run, m)?)?;
    m.add_function(wrap_pyfunction!(check_workload, m)?)?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_figures, m)?)?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_counts_above, m)?)?;
    m.add_function(wrap_pyfunction!(merge_worker_results, m)?)?;
    m.add_function(wrap_pyfunction!(micro_cpu, m)?)?;
    m.add_class::<NetServer>()?;
    m.add_function(wrap_pyfunction!(micro_net_rr, m)?)?;
    m.add_function(wrap_pyfunction!(micro_net_streams, m)?)?;
    m.add_function(wrap_pyfunction!(pick_stream_count, m)?)?;
    Ok(())
}
