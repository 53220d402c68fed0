//! MySQL and MariaDB driver on mysql_async (rustls for TLS, no OpenSSL): URL parsing and TLS
//! modes ([`MySqlConfig`]), sessions with the same API as the PostgreSQL driver
//! ([`MySqlConnection`]), error numbers mapped to the engine's error classes.

mod config;
mod connection;
mod errors;
mod literal;

pub use config::MySqlConfig;
pub use connection::MySqlConnection;
