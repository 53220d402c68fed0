//! pgbench's script language (issue 21): files of SQL commands and meta-commands run unchanged.
//! [`scan`] splits the text as pgbench does, [`parse`] checks it into a [`model::Script`] with
//! pgbench's error wording, [`expr`] and [`eval`] are the expression language of `\set` and
//! `\if`, and [`vars`] holds a client's variables with pgbench's typing of text values.

mod builtin;
mod client;
pub mod eval;
pub mod expr;
mod lex;
pub mod model;
pub mod parse;
mod permute;
mod scan;
mod shell;
pub mod value;
pub mod vars;
mod workload;

pub use client::ScriptClient;
pub use workload::{catalog, ScriptWorkload, NAME};

#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod tests;
