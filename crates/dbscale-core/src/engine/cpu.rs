//! CPU time used by this process (all threads), from getrusage.

use crate::stats::result::CpuTime;

/// User and system CPU seconds used by the process so far.
pub fn process_cpu() -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a full rusage struct into valid memory we own.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    // SAFETY: rc == 0, so the struct was filled in.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// CPU used between two [`process_cpu`] readings.
pub fn between(before: (f64, f64), after: (f64, f64)) -> CpuTime {
    let user = (after.0 - before.0).max(0.0);
    let system = (after.1 - before.1).max(0.0);
    CpuTime {
        user,
        system,
        total: user + system,
    }
}
