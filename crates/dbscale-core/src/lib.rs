//! dbscale-core: the load engine behind dbscale. Drivers, workloads, load models and HDR
//! statistics, in pure Rust; the Python package drives it through `dbscale-py`.

pub mod bounds;
pub mod config;
pub mod contract;
pub mod driver;
pub mod engine;
pub mod error;
pub mod micro;
pub mod runtime;
pub mod stats;
pub mod workload;

pub use config::RunConfig;
pub use error::Error;
