//! PostgreSQL wire-protocol driver (protocol 3.0), lean enough for the hot loop.
//!
//! It replaces a general-purpose client where the client's own CPU is measured: each request
//! is one buffer and one `write`, each response is framed in place, and nothing is allocated
//! per execution once the buffers have grown.
//!
//! Targets: `config`, `conninfo`, `values`. Opening a session: `startup`, `tls`, `auth`.
//! Requests: `connection`, `response`, `copy`, with `sql_template` (simple-protocol literals)
//! and `command_tag`. Messages: `frontend`, `backend`. The socket: `transport`.

mod auth;
mod backend;
mod command_tag;
mod config;
mod connection;
mod conninfo;
mod copy;
mod frontend;
mod response;
mod sql_template;
mod startup;
mod target;
mod tls;
mod values;

pub use config::{PgConfig, PgHost};
pub use connection::PgConnection;
pub use target::{PgTarget, SessionAttrs};
