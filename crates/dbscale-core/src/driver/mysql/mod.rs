//! MySQL and MariaDB driver: our own lean client for plain TCP, mysql_async (rustls, no OpenSSL)
//! for TLS, Unix sockets and other authentication: URL parsing and TLS
//! modes ([`MySqlConfig`]), sessions with the same API as the PostgreSQL driver
//! ([`MySqlConnection`]), error numbers mapped to the engine's error classes.

mod auth;
mod binary;
mod config;
mod connection;
mod errors;
mod handshake;
mod library;
mod literal;
mod local_infile;
mod response;
mod session;
mod target;
mod wire;

pub use config::MySqlConfig;
pub use connection::MySqlConnection;
pub use target::MySqlTarget;
