//! PostgreSQL wire-protocol driver (protocol 3.0), lean enough for the hot loop.
//!
//! It replaces a general-purpose client where the client's own CPU is measured: each request
//! is one buffer and one `write`, each response is framed in place, and nothing is allocated
//! per execution once the buffers have grown. Files: `config`/`conninfo` (targets), `startup`,
//! `tls`, `auth` (opening a session), `connection`/`response`/`copy` (requests), `frontend`/
//! `backend` (messages), `sql_template` (literals for the simple protocol), `command_tag`,
//! `transport` (the socket and its syscall economy).

mod auth;
mod backend;
mod command_tag;
mod config;
mod conninfo;
mod connection;
mod copy;
mod frontend;
mod response;
mod sql_template;
mod startup;
mod tls;
mod transport;

pub use config::{PgConfig, PgHost};
pub use connection::PgConnection;
