//! Opening a session: the socket (TCP or Unix), the SSLRequest negotiation, and the mapping of
//! whatever goes wrong on the way to the [`ConnectFailure`] the user gets a hint for.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use super::config::{PgConfig, PgHost};
use super::{frontend, tls};
use crate::driver::transport::Transport;
use crate::driver::{ConnectFailure, DbError, TlsMode};

/// Connects the socket and, where the mode asks for it, negotiates TLS.
pub(super) async fn open_transport(config: &PgConfig) -> Result<Transport, DbError> {
    let mode = config.tls_mode();
    let host = match config.host() {
        PgHost::Tcp(host) => host,
        PgHost::SocketDir(_) => {
            let path = config.socket_path().expect("socket host");
            if matches!(
                mode,
                TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull
            ) {
                return Err(DbError::connect(
                    ConnectFailure::Tls,
                    format!(
                        "TLS is not available over the Unix socket {}",
                        path.display()
                    ),
                ));
            }
            let stream = UnixStream::connect(&path).await.map_err(|e| {
                let what = match e.kind() {
                    io::ErrorKind::NotFound => "no server socket at".to_string(),
                    _ => format!("cannot connect to socket ({e})"),
                };
                unreachable(format!("{what} {}", path.display()))
            })?;
            return Transport::unix(stream).map_err(|e| unreachable(e.to_string()));
        }
    };
    let port = config.port();
    let connected = match config.hostaddr() {
        Some(addr) => TcpStream::connect((addr, port)).await,
        None => TcpStream::connect((host.as_str(), port)).await,
    };
    let mut tcp =
        connected.map_err(|e| unreachable(format!("connection to {host}:{port} failed: {e}")))?;
    tcp.set_nodelay(true)
        .map_err(|e| unreachable(format!("cannot set TCP_NODELAY: {e}")))?;
    if mode == TlsMode::Disable {
        return Transport::tcp(tcp).map_err(|e| unreachable(e.to_string()));
    }
    match request_tls(&mut tcp).await? {
        true => Ok(Transport::Tls(Box::new(tls::handshake(config, tcp).await?))),
        false if mode == TlsMode::Prefer => {
            Transport::tcp(tcp).map_err(|e| unreachable(e.to_string()))
        }
        false => Err(DbError::connect(
            ConnectFailure::Tls,
            "the server does not accept TLS connections (sslmode requires TLS)",
        )),
    }
}

/// Sends SSLRequest; `true` when the server agreed. Exactly one byte is read, so no plaintext
/// the server may send after it can be mistaken for part of the TLS handshake.
async fn request_tls(tcp: &mut TcpStream) -> Result<bool, DbError> {
    let mut request = Vec::with_capacity(8);
    frontend::ssl_request(&mut request);
    let io_error = |e: io::Error| protocol(format!("TLS negotiation failed: {e}"));
    tcp.write_all(&request).await.map_err(io_error)?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).await.map_err(io_error)?;
    match answer[0] {
        b'S' => Ok(true),
        b'N' => Ok(false),
        other => Err(protocol(format!(
            "unexpected answer '{}' to the TLS request; is this a PostgreSQL server?",
            other.escape_ascii()
        ))),
    }
}

fn unreachable(message: String) -> DbError {
    DbError::connect(ConnectFailure::Unreachable, message)
}

fn protocol(message: String) -> DbError {
    DbError::connect(ConnectFailure::Protocol, message)
}

/// Turns an error met during startup into a connect error: the server's SQLSTATE says why;
/// anything else (EOF, garbage) means the peer does not behave like PostgreSQL.
pub(super) fn connect_error(error: DbError) -> DbError {
    if error.connect.is_some() {
        return error;
    }
    let failure = match error.code.as_deref() {
        // invalid_password, invalid_authorization_specification, insufficient_privilege
        Some("28P01" | "28000" | "42501") => ConnectFailure::Authentication,
        Some("3D000") => ConnectFailure::DatabaseMissing,
        // too_many_connections, insufficient_resources
        Some("53300" | "53000") => ConnectFailure::TooManyConnections,
        // cannot_connect_now (starting, stopping, recovering), admin_shutdown
        Some("57P03" | "57P01") => ConnectFailure::Unavailable,
        _ => ConnectFailure::Protocol,
    };
    let mut mapped = DbError::connect(failure, error.message);
    mapped.code = error.code;
    mapped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_codes_map_to_failures() {
        let cases = [
            ("28P01", ConnectFailure::Authentication),
            ("28000", ConnectFailure::Authentication),
            ("3D000", ConnectFailure::DatabaseMissing),
            ("57P03", ConnectFailure::Unavailable),
            ("53300", ConnectFailure::TooManyConnections),
            ("XX000", ConnectFailure::Protocol),
        ];
        for (code, failure) in cases {
            let e = connect_error(DbError::sql(code, "msg"));
            assert_eq!(e.connect, Some(failure), "{code}");
            assert_eq!(e.code.as_deref(), Some(code));
            assert_eq!(e.message, "msg");
        }
        let eof = connect_error(DbError::connection_lost("server closed the connection"));
        assert_eq!(eof.connect, Some(ConnectFailure::Protocol));
    }
}
