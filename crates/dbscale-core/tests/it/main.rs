//! dbscale-core against real servers, in one test binary: the PostgreSQL and MySQL drivers, the
//! engine end to end, the sysbench workloads. The servers are the private ones
//! `scripts/test-servers.sh` starts; `support.rs` says how tests find them. A test whose server is
//! not configured is reported as ignored, never as passed, and with `DBSCALE_REQUIRE_SERVERS=1`
//! (CI) it runs and fails instead.

mod engine;
mod mysql_driver;
mod postgres_driver;
mod postgres_security;
mod support;
mod sysbench;
mod tpcc;
