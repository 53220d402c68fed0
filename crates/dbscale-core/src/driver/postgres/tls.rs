//! TLS for PostgreSQL sessions: the shared rustls set-up ([`crate::driver::tls`]) with the
//! configuration built once per target and PostgreSQL's ALPN name.

use std::sync::Arc;

use rustls::ClientConfig;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::config::{PgConfig, PgHost};
use crate::driver::tls::{self, tls_error};
use crate::driver::DbError;

/// Runs the TLS handshake on a TCP stream whose SSLRequest the server accepted.
pub(super) async fn handshake(
    config: &PgConfig,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>, DbError> {
    let host = match config.host() {
        PgHost::Tcp(h) => h.as_str(),
        PgHost::SocketDir(_) => return Err(tls_error("TLS is not available over a Unix socket")),
    };
    tls::handshake(client_config(config)?, host, tcp).await
}

/// The client configuration for this target, built once and shared by clones of the config.
/// PostgreSQL 17 checks the ALPN name when one is sent; older servers ignore it.
fn client_config(config: &PgConfig) -> Result<Arc<ClientConfig>, DbError> {
    config
        .tls_client
        .get_or_init(|| {
            tls::client_config(
                config.tls_mode(),
                config.ssl_root_cert(),
                Some(b"postgresql"),
            )
        })
        .clone()
}
