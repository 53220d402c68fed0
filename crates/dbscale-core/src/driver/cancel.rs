//! Cancelling a session's running statement from outside it, as a client whose own deadline
//! passed must: a synchronous-replication wait on PostgreSQL ignores `statement_timeout`, and a
//! session that merely closes its socket leaves the server waiting. PostgreSQL gets its
//! CancelRequest (the pid and secret of BackendKeyData, on a new socket); MySQL and MariaDB get
//! `KILL QUERY <id>` on a new session.

use std::time::Duration;

use super::{Connection, DbError, Endpoint, QueryProtocol};

/// How long a cancel may take before it is given up (the session is dropped anyway).
pub const CANCEL_LIMIT: Duration = Duration::from_secs(2);

/// What names a session to its server for a cancel, taken while the session is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelKey {
    Postgres { pid: i32, secret: i32 },
    Mysql { id: u32 },
}

impl Connection {
    /// The key a cancel of this session's statement needs (none for the MySQL library's
    /// sessions, which are only dropped).
    pub fn cancel_key(&self) -> Option<CancelKey> {
        match self {
            Connection::Postgres(c) => Some(CancelKey::Postgres {
                pid: c.backend_pid(),
                secret: c.cancel_secret(),
            }),
            Connection::Mysql(c) => c.connection_id().map(|id| CancelKey::Mysql { id }),
        }
    }
}

impl Endpoint {
    /// Asks host `host` (of [`Endpoint::host_labels`]) to cancel what the session `key` runs,
    /// within [`CANCEL_LIMIT`].
    pub async fn cancel(&self, host: usize, key: CancelKey) -> Result<(), DbError> {
        let attempt = async {
            match (self, key) {
                (Endpoint::Postgres(target), CancelKey::Postgres { pid, secret }) => {
                    target.cancel(host, pid, secret).await
                }
                (Endpoint::Mysql(target), CancelKey::Mysql { id }) => {
                    let mut admin = target.connect_host(host, QueryProtocol::Simple).await?;
                    let done = admin.batch(&format!("KILL QUERY {id}")).await.map(|_| ());
                    admin.close().await;
                    done
                }
                _ => Err(DbError::connection_lost("a cancel key of another protocol")),
            }
        };
        tokio::time::timeout(CANCEL_LIMIT, attempt)
            .await
            .unwrap_or_else(|_| Err(DbError::connection_lost("the cancel request timed out")))
    }
}
