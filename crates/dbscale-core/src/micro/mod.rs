//! Micro-benchmarks of the machine (issue 19): a CPU score from dbscale's own kernels.

pub mod cpu;
pub mod kernels;
pub mod net;
