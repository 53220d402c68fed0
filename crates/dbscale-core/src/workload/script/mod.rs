//! pgbench's script language (issue 21), built up in parts. This first part is the expression
//! language of `\set`: its parser ([`expr`]) and its evaluation ([`eval`]) with pgbench's types
//! (NULL, boolean, bigint, double), operators, lazy AND/OR/CASE, overflow and coercion errors in
//! pgbench's words, and its functions, the hashes giving pgbench's values.

pub mod eval;
pub mod expr;
mod lex;

#[cfg(test)]
mod tests;
