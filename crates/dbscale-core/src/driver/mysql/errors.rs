//! The client library's errors as [`DbError`]s: server errors by MySQL error number, anything
//! else as a lost connection (after a driver or I/O error the session's state is unknown).

use crate::driver::{ConnectFailure, DbError};
use mysql_async::{DriverError, Error, IoError};

/// ER_UNSUPPORTED_PS: the statement cannot be prepared; it runs as text instead.
pub const UNSUPPORTED_PS: u16 = 1295;

/// An error while a connection was in use.
pub fn query_error(error: Error) -> DbError {
    match error {
        Error::Server(e) => DbError::mysql(e.code, e.message),
        Error::Url(e) => DbError::invalid_target(e.to_string()),
        other => DbError::connection_lost(other.to_string()),
    }
}

/// An error while connecting, with the failure that picks the user's hint.
pub fn connect_error(error: Error) -> DbError {
    match error {
        Error::Server(e) => DbError::mysql_connect(connect_failure(e.code), e.code, e.message),
        Error::Io(IoError::Tls(e)) => DbError::connect(ConnectFailure::Tls, e.to_string()),
        Error::Io(IoError::Io(e)) => {
            let tls = e
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some());
            let failure = if tls {
                ConnectFailure::Tls
            } else {
                ConnectFailure::Unreachable
            };
            DbError::connect(failure, e.to_string())
        }
        Error::Driver(DriverError::NoClientSslFlagFromServer) => DbError::connect(
            ConnectFailure::Tls,
            "TLS was required but the server does not offer it",
        ),
        Error::Driver(
            e @ (DriverError::UnknownAuthPlugin { .. }
            | DriverError::CleartextPluginDisabled
            | DriverError::MysqlOldPasswordDisabled),
        ) => DbError::connect(ConnectFailure::Authentication, e.to_string()),
        Error::Url(e) => DbError::invalid_target(e.to_string()),
        other => DbError::connect(ConnectFailure::Protocol, other.to_string()),
    }
}

/// What a server error number at connect time means for the user.
pub fn connect_failure(code: u16) -> ConnectFailure {
    match code {
        // Bad password or user, no grant for the database or this host.
        1045 | 1044 | 1130 | 1698 => ConnectFailure::Authentication,
        1049 => ConnectFailure::DatabaseMissing,
        // Too many connections, the per-user limits.
        1040 | 1203 | 1226 => ConnectFailure::TooManyConnections,
        // Shutting down, host blocked.
        1053 | 1129 => ConnectFailure::Unavailable,
        // MySQL 3159: the server requires a secure transport.
        3159 => ConnectFailure::Tls,
        _ => ConnectFailure::Protocol,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ErrorClass;
    use mysql_async::ServerError;

    fn server(code: u16) -> Error {
        Error::Server(ServerError {
            code,
            message: "m".into(),
            state: "HY000".into(),
        })
    }

    #[test]
    fn connect_failures_pick_their_hint() {
        assert_eq!(
            connect_error(server(1045)).connect,
            Some(ConnectFailure::Authentication)
        );
        assert_eq!(
            connect_error(server(1049)).connect,
            Some(ConnectFailure::DatabaseMissing)
        );
        assert_eq!(
            connect_error(server(1040)).connect,
            Some(ConnectFailure::TooManyConnections)
        );
        assert_eq!(
            connect_error(server(1053)).connect,
            Some(ConnectFailure::Unavailable)
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            connect_error(Error::from(refused)).connect,
            Some(ConnectFailure::Unreachable)
        );
        let e = connect_error(server(1045));
        assert_eq!(
            (e.class, e.code.as_deref()),
            (ErrorClass::Connect, Some("1045"))
        );
    }

    #[test]
    fn runtime_errors_keep_their_class() {
        assert_eq!(query_error(server(1213)).class, ErrorClass::Deadlock);
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert!(query_error(Error::from(eof)).is_connection_lost());
        assert!(query_error(Error::Driver(DriverError::ConnectionClosed)).is_connection_lost());
    }
}
