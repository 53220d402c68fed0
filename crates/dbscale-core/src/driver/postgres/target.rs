//! A PostgreSQL target of one host or several, as libpq reads `host=h1,h2 port=5432,5433` and
//! `postgresql://h1:5432,h2:5433/db`: each connection tries the hosts in order (a random order
//! with `load_balance_hosts=random`) and keeps the first that takes it and is what
//! `target_session_attrs` asks for (`any`, `read-write`, `read-only`, `primary`, `standby`,
//! `prefer-standby`: standbys first, then any host). A list of hosts is a primary and its
//! failover candidates; several full URLs joined by commas are a cluster's nodes instead, which
//! connections go to in turn (`TargetConfig::endpoints`).

use rand::seq::SliceRandom;

use super::config::PgConfig;
use super::conninfo;
use super::PgConnection;
use crate::driver::{host_list_url, ConnectFailure, DbError, QueryProtocol, TlsMode};

/// The CancelRequest's code (1234 in the high 16 bits, 5678 in the low).
const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// libpq's `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionAttrs {
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

impl SessionAttrs {
    fn parse(value: &str) -> Result<Self, DbError> {
        Ok(match value {
            "any" => Self::Any,
            "read-write" => Self::ReadWrite,
            "read-only" => Self::ReadOnly,
            "primary" => Self::Primary,
            "standby" => Self::Standby,
            "prefer-standby" => Self::PreferStandby,
            other => {
                return Err(DbError::invalid_target(format!(
                    "invalid target_session_attrs value: \"{other}\" (any, read-write, \
                     read-only, primary, standby or prefer-standby)"
                )))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Any => "any",
            Self::ReadWrite => "read-write",
            Self::ReadOnly => "read-only",
            Self::Primary => "primary",
            Self::Standby => "standby",
            Self::PreferStandby => "prefer-standby",
        }
    }

    /// Whether a session with these properties will do; None when nothing needs checking.
    fn accepts(self, read_only: bool, in_recovery: bool) -> Option<&'static str> {
        let refused = match self {
            Self::Any | Self::PreferStandby => false,
            Self::ReadWrite => read_only,
            Self::ReadOnly => !read_only,
            Self::Primary => in_recovery,
            Self::Standby => !in_recovery,
        };
        let why = match self {
            Self::ReadWrite => "session is read-only",
            Self::ReadOnly => "session is not read-only",
            Self::Primary => "server is in hot standby mode",
            _ => "server is not in hot standby mode",
        };
        refused.then_some(why)
    }
}

/// The hosts of one PostgreSQL target, with how a connection chooses among them.
#[derive(Debug, Clone)]
pub struct PgTarget {
    hosts: Vec<PgConfig>,
    attrs: SessionAttrs,
    random_order: bool,
}

impl PgTarget {
    /// Parses a `postgresql://` URL or a libpq `key=value` string of one host or several.
    pub fn parse(url: &str, tls: Option<TlsMode>) -> Result<Self, DbError> {
        let mut common = conninfo::Pairs::new();
        let (mut hosts, mut addrs, mut ports) = (Vec::new(), Vec::new(), Vec::new());
        let (mut attrs, mut random_order) = (SessionAttrs::Any, false);
        for (key, value) in conninfo::parse(url)? {
            let list = || value.split(',').map(str::to_string).collect::<Vec<_>>();
            match key.as_str() {
                "host" => hosts = list(),
                "hostaddr" => addrs = list(),
                "port" => ports = list(),
                "target_session_attrs" => attrs = SessionAttrs::parse(&value)?,
                "load_balance_hosts" => {
                    random_order = match value.as_str() {
                        "disable" => false,
                        "random" => true,
                        other => {
                            return Err(DbError::invalid_target(format!(
                                "invalid load_balance_hosts value: \"{other}\" (disable or \
                                 random)"
                            )))
                        }
                    }
                }
                _ => common.push((key, value)),
            }
        }
        let count = hosts.len().max(addrs.len()).max(1);
        if !hosts.is_empty() && !addrs.is_empty() && hosts.len() != addrs.len() {
            return Err(DbError::invalid_target(format!(
                "could not match {} host names to {} hostaddr values",
                hosts.len(),
                addrs.len()
            )));
        }
        if ports.len() > 1 && ports.len() != count {
            return Err(DbError::invalid_target(format!(
                "could not match {} port numbers to {count} hosts",
                ports.len()
            )));
        }
        let mut configs = Vec::with_capacity(count);
        for i in 0..count {
            let mut pairs = common.clone();
            for (key, values) in [("host", &hosts), ("hostaddr", &addrs)] {
                if let Some(value) = values.get(i) {
                    pairs.push((key.to_string(), value.clone()));
                }
            }
            let port = if ports.len() == 1 {
                ports.first()
            } else {
                ports.get(i)
            };
            if let Some(port) = port.filter(|p| !p.is_empty()) {
                pairs.push(("port".to_string(), port.clone()));
            }
            configs.push(PgConfig::from_pairs(pairs, tls)?);
        }
        Ok(PgTarget {
            hosts: configs,
            attrs,
            random_order,
        })
    }

    /// Each host as a URL without the password, in the order given.
    /// Each host as a target of its own, and the session attributes the list asked for.
    pub fn split_hosts(&self) -> (Vec<PgTarget>, SessionAttrs) {
        let hosts = self
            .hosts
            .iter()
            .map(|host| PgTarget {
                hosts: vec![host.clone()],
                attrs: SessionAttrs::Any,
                random_order: false,
            })
            .collect();
        (hosts, self.attrs)
    }

    /// Whether the list asked for a random host order (`load_balance_hosts=random`).
    pub fn random_order(&self) -> bool {
        self.random_order
    }

    /// Sends host `host` a CancelRequest for session `pid` (its BackendKeyData `secret`) and
    /// waits for the server to close the socket, as it does once it has taken the request.
    pub async fn cancel(&self, host: usize, pid: i32, secret: i32) -> Result<(), DbError> {
        let config = self.hosts.get(host).unwrap_or(&self.hosts[0]);
        let mut transport = super::startup::open_transport(config).await?;
        let mut packet = Vec::with_capacity(16);
        packet.extend_from_slice(&16i32.to_be_bytes());
        packet.extend_from_slice(&CANCEL_REQUEST_CODE.to_be_bytes());
        packet.extend_from_slice(&pid.to_be_bytes());
        packet.extend_from_slice(&secret.to_be_bytes());
        transport
            .write_all(&packet)
            .await
            .map_err(|e| DbError::connection_lost(format!("cancel request: {e}")))?;
        let mut sink = [0u8; 64];
        while matches!(transport.read(&mut sink).await, Ok(n) if n > 0) {}
        Ok(())
    }

    pub fn host_labels(&self) -> Vec<String> {
        self.hosts.iter().map(PgConfig::redacted).collect()
    }

    /// The target as a URL without the password: a single host's URL, or libpq's host list.
    pub fn redacted(&self) -> String {
        if self.hosts.len() == 1 && self.attrs == SessionAttrs::Any && !self.random_order {
            return self.hosts[0].redacted();
        }
        let mut params = Vec::new();
        if self.attrs != SessionAttrs::Any {
            params.push(("target_session_attrs", self.attrs.name()));
        }
        if self.random_order {
            params.push(("load_balance_hosts", "random"));
        }
        host_list_url(&self.host_labels(), &params)
    }

    /// A session on the first host, in order, that takes it and is what the target's
    /// `target_session_attrs` asks for, with that host's index; with none, why each host would
    /// not do.
    pub async fn connect(&self, protocol: QueryProtocol) -> Result<(PgConnection, usize), DbError> {
        if self.hosts.len() == 1 && self.attrs == SessionAttrs::Any {
            return Ok((PgConnection::connect(&self.hosts[0], protocol).await?, 0));
        }
        let mut order: Vec<usize> = (0..self.hosts.len()).collect();
        if self.random_order {
            order.shuffle(&mut rand::thread_rng());
        }
        let passes: &[SessionAttrs] = match self.attrs {
            SessionAttrs::PreferStandby => &[SessionAttrs::Standby, SessionAttrs::Any],
            one => &[one],
        };
        let mut refusals: Vec<(String, DbError)> = Vec::new();
        for &wanted in passes {
            for &i in &order {
                let host = &self.hosts[i];
                match self.try_host(host, protocol, wanted).await {
                    Ok(connection) => return Ok((connection, i)),
                    Err(error) => refusals.push((host.redacted(), error)),
                }
            }
        }
        Err(self.none_would_do(refusals))
    }

    async fn try_host(
        &self,
        host: &PgConfig,
        protocol: QueryProtocol,
        wanted: SessionAttrs,
    ) -> Result<PgConnection, DbError> {
        let mut connection = PgConnection::connect(host, protocol).await?;
        if wanted == SessionAttrs::Any {
            return Ok(connection);
        }
        let rows = connection
            .query("SELECT current_setting('transaction_read_only'), pg_is_in_recovery()")
            .await?;
        let cell = |i: usize| rows.first().and_then(|r| r.get(i)).cloned().flatten();
        let read_only = cell(0).as_deref() == Some("on");
        let in_recovery = cell(1).as_deref() == Some("t");
        match wanted.accepts(read_only, in_recovery) {
            None => Ok(connection),
            Some(why) => Err(DbError::connect(ConnectFailure::Unavailable, why)),
        }
    }

    /// One error for a connection no host would take: the last host's kind of failure, with
    /// every host's reason.
    fn none_would_do(&self, refusals: Vec<(String, DbError)>) -> DbError {
        let reasons: Vec<String> = refusals
            .iter()
            .map(|(host, error)| format!("{host}: {}", error.message))
            .collect();
        let failure = refusals
            .last()
            .and_then(|(_, e)| e.connect)
            .unwrap_or(ConnectFailure::Unreachable);
        DbError::connect(
            failure,
            format!(
                "no host took the connection as target_session_attrs={} asks ({})",
                self.attrs.name(),
                reasons.join("; ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(target: &PgTarget) -> Vec<String> {
        target.host_labels()
    }

    #[test]
    fn libpq_host_lists_in_both_spellings() {
        let uri = PgTarget::parse(
            "postgresql://u:pw@h1:5432,h2:5433,[::1]/db?target_session_attrs=read-write",
            None,
        )
        .unwrap();
        assert_eq!(
            hosts(&uri),
            [
                "postgresql://u@h1:5432/db",
                "postgresql://u@h2:5433/db",
                "postgresql://u@[::1]:5432/db"
            ]
        );
        assert_eq!(uri.attrs, SessionAttrs::ReadWrite);
        assert_eq!(
            uri.redacted(),
            "postgresql://u@h1:5432,h2:5433,[::1]:5432/db?target_session_attrs=read-write"
        );
        let kv = PgTarget::parse(
            "host=h1,h2 port=5432,5433 user=u dbname=db target_session_attrs=prefer-standby \
             load_balance_hosts=random",
            None,
        )
        .unwrap();
        assert_eq!(
            hosts(&kv),
            ["postgresql://u@h1:5432/db", "postgresql://u@h2:5433/db"]
        );
        assert_eq!(
            (kv.attrs, kv.random_order),
            (SessionAttrs::PreferStandby, true)
        );
        // One port serves every host.
        let one_port = PgTarget::parse("host=a,b port=6000 user=u", None).unwrap();
        assert_eq!(
            hosts(&one_port),
            ["postgresql://u@a:6000/u", "postgresql://u@b:6000/u"]
        );
    }

    #[test]
    fn mismatched_lists_and_bad_values_are_refused() {
        for (url, message) in [
            (
                "host=a,b port=1,2,3 user=u",
                "could not match 3 port numbers to 2 hosts",
            ),
            (
                "host=a,b hostaddr=127.0.0.1 user=u",
                "could not match 2 host names to 1 hostaddr values",
            ),
            (
                "host=a user=u target_session_attrs=maybe",
                "invalid target_session_attrs value",
            ),
            (
                "host=a user=u load_balance_hosts=yes",
                "invalid load_balance_hosts value",
            ),
        ] {
            let error = PgTarget::parse(url, None).unwrap_err();
            assert!(error.message.contains(message), "{url}: {}", error.message);
        }
    }

    #[test]
    fn session_attrs_decide_as_libpq_does() {
        use SessionAttrs::*;
        // (read_only, in_recovery): a primary, a read-only primary, a standby.
        let sessions = [(false, false), (true, false), (true, true)];
        let accepted = |attrs: SessionAttrs| -> Vec<bool> {
            sessions
                .iter()
                .map(|&(ro, rec)| attrs.accepts(ro, rec).is_none())
                .collect()
        };
        assert_eq!(accepted(Any), [true, true, true]);
        assert_eq!(accepted(ReadWrite), [true, false, false]);
        assert_eq!(accepted(ReadOnly), [false, true, true]);
        assert_eq!(accepted(Primary), [true, true, false]);
        assert_eq!(accepted(Standby), [false, false, true]);
    }
}
