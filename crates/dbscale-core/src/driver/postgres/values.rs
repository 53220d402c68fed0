//! Typed values of the libpq connection keywords (port, sslmode, hostaddr, connect_timeout),
//! and libpq's default user: the OS user name.

use std::net::IpAddr;
use std::time::Duration;

use crate::driver::{DbError, TlsMode};

pub(super) fn parse_port(value: &str) -> Result<u16, DbError> {
    match value.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(DbError::invalid_target(format!(
            "invalid port \"{value}\": expected a number from 1 to 65535"
        ))),
    }
}

pub(super) fn parse_hostaddr(value: &str) -> Result<IpAddr, DbError> {
    value.parse().map_err(|_| {
        DbError::invalid_target(format!(
            "invalid hostaddr \"{value}\": expected an IP address"
        ))
    })
}

pub(super) fn parse_sslmode(value: &str) -> Result<TlsMode, DbError> {
    Ok(match value {
        "disable" => TlsMode::Disable,
        // libpq's `allow` tries plain first; preferring TLS is the safer reading.
        "allow" | "prefer" => TlsMode::Prefer,
        "require" => TlsMode::Require,
        "verify-ca" => TlsMode::VerifyCa,
        "verify-full" => TlsMode::VerifyFull,
        _ => {
            return Err(DbError::invalid_target(format!(
                "invalid sslmode \"{value}\": expected disable, allow, prefer, require, verify-ca or verify-full"
            )))
        }
    })
}

pub(super) fn sslmode_name(mode: TlsMode) -> &'static str {
    match mode {
        TlsMode::Disable => "disable",
        TlsMode::Prefer => "prefer",
        TlsMode::Require => "require",
        TlsMode::VerifyCa => "verify-ca",
        TlsMode::VerifyFull => "verify-full",
    }
}

/// Whole seconds as in libpq; zero or less waits forever.
pub(super) fn parse_timeout(value: &str) -> Result<Option<Duration>, DbError> {
    match value.trim().parse::<i64>() {
        Ok(s) if s <= 0 => Ok(None),
        Ok(s) => Ok(Some(Duration::from_secs(s as u64))),
        Err(_) => Err(DbError::invalid_target(format!(
            "invalid connect_timeout \"{value}\": expected whole seconds"
        ))),
    }
}

/// The effective user's login name, libpq's default user.
pub(super) fn os_user_name() -> Option<String> {
    let mut buf = vec![0u8; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes only into `pwd` and `buf`, whose sizes we pass; the name it
    // points to lives in `buf`, which outlives the CStr we read it through.
    unsafe {
        let rc = libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(pwd.pw_name);
        Some(name.to_string_lossy().into_owned())
    }
}
