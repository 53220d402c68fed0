//! A fresh single-threaded event loop for work outside the measured run (setup, prepare, cleanup,
//! checks): below both the engine and the workloads' loaders, which use it.

use crate::Error;

/// Runs a future to completion on a fresh single-threaded loop.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start an event loop: {e}")))?;
    Ok(runtime.block_on(future))
}
