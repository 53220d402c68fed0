//! A target's nodes and how clients use them: each host of the target is a node (several URLs,
//! a libpq host list, a MySQL host list); the routing policy gives each client its home node
//! and the order in which it tries the others; a node that lost a session or refused one is
//! suspect for a moment and tried last, so the clients of a lost node move to live ones at once
//! instead of queueing on a dead address. Nodes also count the connections each took and,
//! when asked, the stretches without a successful transaction (`availability.rs`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::availability::Availability;
use crate::config::{Routing, RunConfig};
use crate::driver::postgres::SessionAttrs;
use crate::driver::{
    CancelKey, ConnectFailure, Connection, DbError, Dialect, Endpoint, ErrorClass, QueryProtocol,
};
use crate::workload::{family_of, Family};
use crate::Error;

/// How long a node that lost or refused a session is tried after the others.
const SUSPECT_FOR: Duration = Duration::from_secs(1);

/// What a node is, as far as routing to writers and readers goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Writer,
    Reader,
}

pub struct Nodes {
    nodes: Vec<Endpoint>,
    labels: Vec<String>,
    routing: Routing,
    dialect: Dialect,
    epoch: Instant,
    /// Until when (nanoseconds since `epoch`) each node is suspect.
    suspect_until: Vec<AtomicU64>,
    /// The node last found to take writes (primary routing tries it first).
    writer_hint: AtomicUsize,
    connections: Vec<AtomicU64>,
    pub availability: Option<Availability>,
}

impl Nodes {
    /// The target's hosts as nodes, with the routing its config asks for, else the one its URL
    /// implies (a host list's `target_session_attrs`), else for several URLs (a cluster's nodes)
    /// the one that keeps the workload valid there: see [`cluster_routing`].
    pub fn new(config: &RunConfig) -> Result<Self, Error> {
        let endpoints = config.target.endpoints()?;
        let several_urls = endpoints.len() > 1;
        let mut nodes = Vec::new();
        let mut implied = Routing::RoundRobin;
        for endpoint in &endpoints {
            let random = matches!(endpoint, Endpoint::Postgres(t) if t.random_order())
                || endpoint.redacted().contains("load_balance_hosts=random");
            let (hosts, attrs) = endpoint.split_hosts();
            if !several_urls {
                implied = implied_routing(attrs, random);
            }
            nodes.extend(hosts);
        }
        if several_urls {
            implied = cluster_routing(endpoints[0].dialect(), family_of(&config.workload.name));
        }
        let routing = config.target.routing.unwrap_or(implied);
        let labels: Vec<String> = nodes.iter().map(Endpoint::redacted).collect();
        let count = nodes.len();
        Ok(Self {
            dialect: nodes[0].dialect(),
            nodes,
            labels,
            routing,
            epoch: Instant::now(),
            suspect_until: (0..count).map(|_| AtomicU64::new(0)).collect(),
            writer_hint: AtomicUsize::new(0),
            connections: (0..count).map(|_| AtomicU64::new(0)).collect(),
            availability: config.track_availability.then(|| Availability::new(count)),
        })
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn routing(&self) -> Routing {
        self.routing
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Each node's URL without its password.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// A client's connection on `node` is open (the setup session is not counted).
    pub fn count_connection(&self, node: usize) {
        self.connections[node].fetch_add(1, Ordering::Relaxed);
    }

    /// Connections each node took so far.
    pub fn connection_counts(&self) -> Vec<u64> {
        self.connections
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .collect()
    }

    /// The node a client with routing key `key` belongs on (its slot, or under affinity its
    /// data's key, e.g. a TPC-C warehouse).
    pub fn home(&self, key: u64) -> usize {
        match self.routing {
            Routing::First => 0,
            Routing::Primary => self.writer_hint.load(Ordering::Relaxed),
            _ => (key % self.nodes.len() as u64) as usize,
        }
    }

    /// Whether a client away from its home node should go back when it can (its home is its
    /// data's node, or the spread of clients over nodes is the point).
    pub fn returns_home(&self) -> bool {
        self.nodes.len() > 1 && matches!(self.routing, Routing::Affinity | Routing::RoundRobin)
    }

    /// The order in which a client whose home is `home` tries the nodes: from its home on,
    /// suspect nodes last.
    fn order(&self, home: usize) -> Vec<usize> {
        let n = self.nodes.len();
        let now = self.now_ns();
        let mut order: Vec<usize> = (0..n).map(|i| (home + i) % n).collect();
        order.sort_by_key(|&i| self.suspect_until[i].load(Ordering::Relaxed) > now);
        order
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Node `node` lost a session or would not serve: tried last for a moment.
    pub fn suspect(&self, node: usize) {
        let until = self.now_ns() + SUSPECT_FOR.as_nanos() as u64;
        self.suspect_until[node].fetch_max(until, Ordering::Relaxed);
    }

    pub fn is_suspect(&self, node: usize) -> bool {
        self.suspect_until[node].load(Ordering::Relaxed) > self.now_ns()
    }

    /// Whether `error` says the session is on a node the routing should not have used (a
    /// standby refusing a write): the client then looks for the right node again.
    pub fn is_wrong_node(&self, error: &DbError) -> bool {
        let refused_write = match &error.class {
            // read_only_sql_transaction; MySQL's ER_OPTION_PREVENTS_STATEMENT (--read-only).
            ErrorClass::Sql(code) => code == "25006" || code == "1290",
            _ => false,
        };
        refused_write && self.nodes.len() > 1
    }

    /// A session for a client whose home is `home`: the first node in its order that accepts
    /// it and has the role the routing wants; with none, each node's reason.
    pub async fn connect(
        &self,
        home: usize,
        protocol: QueryProtocol,
    ) -> Result<(Connection, usize), DbError> {
        let passes: &[Option<Role>] = match self.routing {
            Routing::Primary => &[Some(Role::Writer)],
            Routing::Standby => &[Some(Role::Reader)],
            Routing::PreferStandby => &[Some(Role::Reader), None],
            _ => &[None],
        };
        let mut reasons = Vec::new();
        let mut failure = ConnectFailure::Unreachable;
        for wanted in passes {
            for node in self.order(home) {
                match self.connect_node(node, protocol, *wanted).await {
                    Ok(conn) => return Ok((conn, node)),
                    // One node, nothing asked of it: its own error, as a plain target gives.
                    Err(error) if self.nodes.len() == 1 && wanted.is_none() => return Err(error),
                    Err(error) => {
                        failure = error.connect.unwrap_or(failure);
                        reasons.push(format!("{}: {}", self.labels[node], error.message));
                    }
                }
            }
        }
        Err(DbError::connect(
            failure,
            format!(
                "no node took the connection as {} routing asks ({})",
                routing_name(self.routing),
                reasons.join("; ")
            ),
        ))
    }

    /// A session on node `node` only, if it has the role `wanted` (any when None).
    pub async fn connect_node_any(
        &self,
        node: usize,
        protocol: QueryProtocol,
    ) -> Result<Connection, DbError> {
        self.connect_node(node, protocol, None).await
    }

    async fn connect_node(
        &self,
        node: usize,
        protocol: QueryProtocol,
        wanted: Option<Role>,
    ) -> Result<Connection, DbError> {
        let outcome = async {
            let mut conn = self.nodes[node].connect(protocol).await?;
            if let Some(wanted) = wanted {
                let role = self.role(&mut conn).await?;
                if role != wanted {
                    conn.close().await;
                    let what = if role == Role::Writer {
                        "a primary, not a standby"
                    } else {
                        "a standby (read-only)"
                    };
                    return Err(DbError::connect(ConnectFailure::Unavailable, what));
                }
                if role == Role::Writer {
                    self.writer_hint.store(node, Ordering::Relaxed);
                }
            }
            Ok(conn)
        }
        .await;
        if let Err(error) = &outcome {
            if error.connect != Some(ConnectFailure::InvalidTarget) {
                self.suspect(node);
            }
        }
        outcome
    }

    /// Whether the session's node takes writes (PostgreSQL: not in recovery; MySQL and
    /// MariaDB: `read_only` off).
    async fn role(&self, conn: &mut Connection) -> Result<Role, DbError> {
        let sql = match self.dialect {
            Dialect::Postgres => "SELECT pg_is_in_recovery()::int",
            Dialect::Mysql => "SELECT @@global.read_only",
        };
        let rows = conn.query(sql).await?;
        let flag = rows.first().and_then(|r| r.first()).cloned().flatten();
        Ok(match flag.as_deref().map(str::trim) {
            Some("0") => Role::Writer,
            _ => Role::Reader,
        })
    }

    /// Asks node `node` to cancel the statement of session `key` (a client's deadline passed).
    pub async fn cancel(&self, node: usize, key: CancelKey) {
        let _ = self.nodes[node].cancel(0, key).await;
    }

    /// Whether one node takes the writes (the primary-and-standby routings over several
    /// nodes): loads, checks and pgbench's maintenance must go there.
    pub fn has_one_writer(&self) -> bool {
        self.nodes.len() > 1
            && matches!(
                self.routing,
                Routing::Primary | Routing::Standby | Routing::PreferStandby
            )
    }

    /// A session for setting the run up (checks, pgbench's maintenance): on the writer under
    /// the primary-and-standby routings, else on the first node that takes it.
    pub async fn setup_session(&self, protocol: QueryProtocol) -> Result<Connection, Error> {
        self.writer(protocol).await.map(|(conn, _)| conn)
    }

    /// The node that takes writes, found as [`Nodes::setup_session`] finds it, as a target of
    /// its own (a load's connections all go there).
    pub async fn writer_endpoint(&self, protocol: QueryProtocol) -> Result<Endpoint, Error> {
        let (conn, node) = self.writer(protocol).await?;
        conn.close().await;
        Ok(self.nodes[node].clone())
    }

    async fn writer(&self, protocol: QueryProtocol) -> Result<(Connection, usize), Error> {
        let wanted = self.has_one_writer().then_some(Role::Writer);
        let mut last = None;
        for node in self.order(0) {
            match self.connect_node(node, protocol, wanted).await {
                Ok(conn) => return Ok((conn, node)),
                Err(error) => last = Some((node, error)),
            }
        }
        let (node, source) = last.expect("a target has a node");
        Err(Error::Connect {
            target: self.labels[node].clone(),
            source,
        })
    }
}

/// The routing libpq's options ask of one URL's host list.
/// A cluster given as several URLs, when the plan does not say: a PostgreSQL cluster has one
/// writer, so clients go where writes go (`primary`); a MySQL-protocol cluster is taken for
/// multi-master (Galera), where TPC-C pins each warehouse's terminals to one node (`affinity`:
/// the Cloud Report's partitioned load; hot rows written through several nodes conflict at
/// commit) and other workloads spread round-robin.
fn cluster_routing(dialect: Dialect, family: Option<Family>) -> Routing {
    match (dialect, family) {
        (Dialect::Postgres, _) => Routing::Primary,
        (Dialect::Mysql, Some(Family::Tpcc)) => Routing::Affinity,
        (Dialect::Mysql, _) => Routing::RoundRobin,
    }
}

fn implied_routing(attrs: SessionAttrs, random: bool) -> Routing {
    match attrs {
        SessionAttrs::ReadWrite | SessionAttrs::Primary => Routing::Primary,
        SessionAttrs::Standby | SessionAttrs::ReadOnly => Routing::Standby,
        SessionAttrs::PreferStandby => Routing::PreferStandby,
        SessionAttrs::Any if random => Routing::RoundRobin,
        SessionAttrs::Any => Routing::First,
    }
}

fn routing_name(routing: Routing) -> &'static str {
    match routing {
        Routing::First => "first",
        Routing::RoundRobin => "round-robin",
        Routing::Affinity => "affinity",
        Routing::Primary => "primary",
        Routing::PreferStandby => "prefer-standby",
        Routing::Standby => "standby",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(target: &str) -> Nodes {
        let config = RunConfig::from_json(&format!(
            r#"{{"target": {target}, "workload": {{"name": "tpcb"}}, "track_availability": true}}"#
        ))
        .expect("config");
        Nodes::new(&config).expect("nodes")
    }

    #[test]
    fn several_urls_are_nodes_spread_round_robin_and_a_lost_one_is_tried_last() {
        let n = nodes(
            r#"{"url": "postgresql://u@a/db", "more_urls": ["postgresql://u@b/db", "postgresql://u@c/db"], "routing": "round-robin"}"#,
        );
        assert_eq!(n.len(), 3);
        assert_eq!(n.routing(), Routing::RoundRobin);
        assert_eq!((n.home(0), n.home(1), n.home(5)), (0, 1, 2));
        assert_eq!(n.order(1), [1, 2, 0]);
        n.suspect(1);
        assert!(n.is_suspect(1));
        assert_eq!(
            n.order(1),
            [2, 0, 1],
            "a lost node is tried after the live ones"
        );
        assert!(n.returns_home());
        assert!(n.availability.is_some());
    }

    #[test]
    fn a_cluster_of_urls_routes_as_keeps_its_workload_valid_unless_told() {
        let with = |url: &str, more: &str, workload: &str| {
            let config = RunConfig::from_json(&format!(
                r#"{{"target": {{"url": "{url}", "more_urls": ["{more}"]}}, "workload": {{"name": "{workload}"}}}}"#
            ))
            .expect("config");
            Nodes::new(&config).expect("nodes").routing()
        };
        let (pg, pg2) = ("postgresql://u@a/db", "postgresql://u@b/db");
        let (my, my2) = ("mysql://u@a/db", "mysql://u@b/db");
        assert_eq!(with(pg, pg2, "tpcc"), Routing::Primary);
        assert_eq!(with(pg, pg2, "tpcb"), Routing::Primary);
        assert_eq!(with(my, my2, "tpc-c"), Routing::Affinity);
        assert_eq!(
            with(my, my2, "sysbench:oltp_read_write"),
            Routing::RoundRobin
        );
        assert_eq!(with(my, my2, "no-such-workload"), Routing::RoundRobin);
    }

    #[test]
    fn a_libpq_host_list_routes_as_its_session_attributes_ask() {
        let primary = nodes(
            r#"{"url": "host=a,b,c port=5432,5433,5434 user=u dbname=db target_session_attrs=read-write"}"#,
        );
        assert_eq!((primary.len(), primary.routing()), (3, Routing::Primary));
        assert!(primary.has_one_writer() && !primary.returns_home());
        assert_eq!(primary.labels()[1], "postgresql://u@b:5433/db");
        let standby =
            nodes(r#"{"url": "postgresql://u@a,b/db?target_session_attrs=prefer-standby"}"#);
        assert_eq!(standby.routing(), Routing::PreferStandby);
        let plain = nodes(r#"{"url": "postgresql://u@a,b/db"}"#);
        assert_eq!(plain.routing(), Routing::First);
        assert_eq!((plain.home(7), plain.order(0)), (0, vec![0, 1]));
        let chosen = nodes(r#"{"url": "postgresql://u@a,b/db", "routing": "affinity"}"#);
        assert_eq!(chosen.routing(), Routing::Affinity);
    }

    #[test]
    fn a_refused_write_sends_the_client_elsewhere_only_on_a_cluster() {
        let read_only = DbError::sql("25006", "cannot execute UPDATE in a read-only transaction");
        let cluster =
            nodes(r#"{"url": "postgresql://u@a/db", "more_urls": ["postgresql://u@b/db"]}"#);
        assert!(cluster.is_wrong_node(&read_only));
        let single = nodes(r#"{"url": "postgresql://u@a/db"}"#);
        assert!(
            !single.is_wrong_node(&read_only),
            "one server: the user's error, not routing"
        );
        assert!(!cluster.is_wrong_node(&DbError::sql("40001", "serialization")));
    }
}
