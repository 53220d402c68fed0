//! The one resolved configuration of a run, as Python's pydantic models send it (JSON). It is
//! validated here once; nothing below reads the environment or re-parses options.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::driver::{ConnectMode, Endpoint, QueryProtocol, TlsMode};

pub use super::bounds::{Bound, BOUNDS, MAX_DURATION_S, MIN_DURATION_S};

/// Everything a run, a prepare or a cleanup needs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub target: TargetConfig,
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub protocol: QueryProtocol,
    #[serde(default)]
    pub connect: ConnectMode,
    /// Concurrent clients (connections); the closed model runs them back to back.
    #[serde(default = "default_clients")]
    pub clients: u32,
    /// OS threads, each with its own single-threaded event loop (like pgbench `-j`).
    /// `None` picks min(clients, available cores).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Measured duration.
    #[serde(default = "default_duration_s")]
    pub duration_s: f64,
    /// Transactions per client (pgbench `-t`): each client stops after this many, and the run
    /// ends when every client has; `duration_s` is then a limit, not a length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<u64>,
    /// Unmeasured time before it, over which the clients start one after another.
    #[serde(default)]
    pub ramp_s: f64,
    /// Open model: target transactions per second over all clients (Poisson arrivals).
    #[serde(default)]
    pub rate_tps: Option<f64>,
    /// Tries per transaction for serialization failures and deadlocks (pgbench `--max-tries`).
    #[serde(default = "default_max_tries")]
    pub max_tries: u32,
    /// Seed of the random generators; `None` draws one and reports it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Width of the per-interval snapshots Python polls.
    #[serde(default = "default_interval_s")]
    pub interval_s: f64,
    /// pgbench `-L`: transactions slower than this count as over the limit, and under a rate
    /// those already this late when due are skipped (never sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_ms: Option<f64>,
    /// A client-side deadline per transaction: past it the running statement is cancelled, the
    /// session dropped and the transaction failed as `client_timeout` (a synchronous-replication
    /// wait ignores the server's `statement_timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_timeout_s: Option<f64>,
    /// Record, per node and over the whole target, each stretch of 100 ms or more without a
    /// successful transaction (a node lost, a failover): set for clusters and fault steps.
    #[serde(default)]
    pub track_availability: bool,
    /// Keep each interval's histogram, and one per transaction type, in the result (a capacity
    /// level's seconds are judged from them); a scaled-out run's workers keep them anyway.
    #[serde(default)]
    pub interval_histograms: bool,
    /// pgbench `-l`: a line per transaction (or a sample of them) in pgbench's log format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_log: Option<TransactionLogConfig>,
    /// This run is one worker's share of a run spread over several load generators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<WorkerShare>,
    /// Once every client has connected, the run waits for `go` before its (ramp and) measured
    /// window, as a scaled-out worker does: the caller takes what it needs at the exact start
    /// (the server's statement statistics).
    #[serde(default)]
    pub wait_for_go: bool,
    /// Time each statement of a built-in workload on the client (count, sum, largest and a
    /// histogram per statement, in the result's `statements`).
    #[serde(default)]
    pub statement_timing: bool,
    /// `prepare` only: one phase, or one worker's part of the rows, of a load split over
    /// several load generators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_part: Option<LoadPart>,
}

/// Where a run's per-transaction log goes: thread 0 writes `path`, thread N `path.N` (as pgbench
/// names its files); a scaled-out run's worker adds `.wK` for its K-th client block.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransactionLogConfig {
    pub path: String,
    /// The share of transactions logged (pgbench `--sampling-rate`).
    #[serde(default = "full_rate")]
    pub sampling_rate: f64,
}

fn full_rate() -> f64 {
    1.0
}

/// A load split over workers: `schema` (drop and create) on one, `rows` on every worker, each
/// its `part` of `parts` (TPC-C warehouses, sysbench tables, TPC-B account ranges), then
/// `finish` (keys, indexes, statistics) on one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadPart {
    pub phase: LoadPhase,
    #[serde(default)]
    pub part: u32,
    #[serde(default = "one")]
    pub parts: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LoadPhase {
    Schema,
    Rows,
    Finish,
}

impl LoadPart {
    /// Whether `phase` runs here (every phase when the load is not split).
    pub fn runs(part: Option<&LoadPart>, phase: LoadPhase) -> bool {
        part.is_none_or(|p| p.phase == phase)
    }

    /// Whether the piece numbered `key` (a warehouse, a table, a range) is this part's.
    pub fn owns(part: Option<&LoadPart>, key: u64) -> bool {
        part.is_none_or(|p| key % u64::from(p.parts.max(1)) == u64::from(p.part))
    }
}

/// One worker's part of a scaled-out run: its clients are `first_client ..` of the whole run's
/// `total_clients` (so TPC-C terminals and sysbench ids are the whole run's), it waits after
/// connecting until told when to start, and its result carries what an exact merge needs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerShare {
    pub first_client: u32,
    pub total_clients: u32,
}

impl RunConfig {
    /// The id of local client `local` in the whole run.
    pub fn client_id(&self, local: u32) -> u32 {
        self.share.as_ref().map_or(0, |s| s.first_client) + local
    }

    /// Clients of the whole run (over every worker).
    pub fn total_clients(&self) -> u32 {
        self.share
            .as_ref()
            .map_or(self.clients, |s| s.total_clients)
    }
}

/// Where to connect. `url` is a `postgresql://` URL or a libpq `key=value` string.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetConfig {
    pub url: String,
    /// Further URLs of the same database (other nodes of a cluster): connections go round-robin
    /// over `url` and these.
    #[serde(default)]
    pub more_urls: Vec<String>,
    /// Overrides `sslmode` in the URL when set.
    #[serde(default)]
    pub tls: Option<TlsMode>,
    /// How clients use the nodes (`url`, `more_urls`, and the hosts of a host list). Unset:
    /// round-robin over several URLs, and libpq's order (`target_session_attrs`,
    /// `load_balance_hosts`) over one URL's host list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
}

/// How a target's clients are spread over its nodes, and where they go when a node is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Routing {
    /// Every client takes the first node, in order, that accepts it (libpq's host list).
    First,
    /// Client i starts on node i mod N (the Cloud Report's list of node URLs).
    RoundRobin,
    /// A client stays on the node of its data: a TPC-C terminal's warehouse w on node w mod N,
    /// other workloads by client id; it returns there once the node is back.
    Affinity,
    /// Every client on the node that accepts writes (libpq's `read-write`), found again after
    /// a failover.
    Primary,
    /// Clients spread over standbys, on the primary when no standby will do.
    PreferStandby,
    /// Clients spread over standbys only.
    Standby,
}

impl TargetConfig {
    /// The first host's endpoint: the one place a target's URL is parsed.
    pub fn endpoint(&self) -> Result<Endpoint, crate::Error> {
        parse_endpoint(&self.url, self.tls)
    }

    /// Every host's endpoint, in order; all must speak the same dialect.
    pub fn endpoints(&self) -> Result<Vec<Endpoint>, crate::Error> {
        let mut endpoints: Vec<Endpoint> = Vec::new();
        for url in std::iter::once(&self.url).chain(&self.more_urls) {
            let endpoint = parse_endpoint(url, self.tls)?;
            if endpoints
                .first()
                .is_some_and(|first| first.dialect() != endpoint.dialect())
            {
                return Err(crate::Error::Config(
                    "a target's hosts must all be PostgreSQL or all MySQL/MariaDB".into(),
                ));
            }
            endpoints.push(endpoint);
        }
        Ok(endpoints)
    }
}

fn parse_endpoint(url: &str, tls: Option<TlsMode>) -> Result<Endpoint, crate::Error> {
    Endpoint::parse(url, tls).map_err(|source| crate::Error::Connect {
        target: redact_fallback(url),
        source,
    })
}

/// A URL we could not parse may still hold a password: show only the scheme.
fn redact_fallback(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, _)) => format!("{scheme}://…"),
        None => "the target".into(),
    }
}

/// A workload by name with its parameters (`--set key=value`); unknown keys are refused.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    pub name: String,
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// The `script` workload's mix: files (their text, read once by the caller) and built-ins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptSource>,
    /// Script variables every client starts with (pgbench `--define name=value`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defines: BTreeMap<String, String>,
}

/// One script of a mix: a file's `text` under its `name`, or a built-in by name (no text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSource {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default = "one")]
    pub weight: u32,
}

fn default_clients() -> u32 {
    1
}

fn default_duration_s() -> f64 {
    30.0
}
fn default_max_tries() -> u32 {
    1
}
fn default_interval_s() -> f64 {
    1.0
}

impl RunConfig {
    pub fn from_json(text: &str) -> Result<Self, crate::Error> {
        let config: RunConfig = serde_json::from_str(text)
            .map_err(|e| crate::Error::Config(format!("invalid run configuration: {e}")))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), crate::Error> {
        let fail = |m: String| Err(crate::Error::Config(m));
        let document = serde_json::to_value(self)
            .map_err(|e| crate::Error::Internal(format!("a run configuration: {e}")))?;
        for bound in BOUNDS {
            let Some(value) = bound.path.iter().try_fold(&document, |v, key| v.get(key)) else {
                continue;
            };
            if let Some(number) = value.as_f64() {
                if !bound.holds(value, number) {
                    return fail(bound.refusal(number));
                }
            }
        }
        if let Some(part) = &self.load_part {
            if part.part >= part.parts {
                return fail(format!(
                    "load part {} of {} does not exist",
                    part.part, part.parts
                ));
            }
        }
        if let Some(share) = &self.share {
            if u64::from(share.first_client) + u64::from(self.clients)
                > u64::from(share.total_clients)
            {
                return fail(format!(
                    "a worker's clients {}..{} lie outside the run's {}",
                    share.first_client,
                    u64::from(share.first_client) + u64::from(self.clients),
                    share.total_clients
                ));
            }
        }
        Ok(())
    }

    /// Whether each interval keeps its histograms (asked for, or a worker's share to merge).
    pub fn keeps_interval_histograms(&self) -> bool {
        self.interval_histograms || self.share.is_some()
    }

    /// Threads actually used: never more than clients.
    pub fn effective_threads(&self) -> u32 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        self.threads.unwrap_or(cores).clamp(1, self.clients)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_duration(duration: &str) -> Result<RunConfig, crate::Error> {
        RunConfig::from_json(&format!(
            r#"{{"target": {{"url": "postgresql://u@h/db"}}, "workload": {{"name": "tpcb"}},
                "duration_s": {duration}}}"#
        ))
    }

    #[test]
    fn durations_are_bounded_at_the_edge() {
        assert!(with_duration("10").is_ok());
        for bad in ["1e23", "0.0000001", "0", "-1", "604801"] {
            let error = with_duration(bad).expect_err(bad).to_string();
            assert!(
                error.contains("duration must be from 0.1s"),
                "{bad}: {error}"
            );
        }
    }
}
