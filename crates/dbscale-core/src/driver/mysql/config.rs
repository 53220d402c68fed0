//! [`MySqlConfig`]: a MySQL or MariaDB target resolved once from a `mysql://` or `mariadb://`
//! URL, turned into the client library's options once, so reconnecting costs no parsing.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mysql_async::{Opts, OptsBuilder, SslOpts};
use percent_encoding::{percent_decode_str, utf8_percent_encode};

use crate::driver::{DbError, TlsMode, URL_COMPONENT};

const DEFAULT_PORT: u16 = 3306;
const DEFAULT_HOST: &str = "localhost";
/// Like libmysqlclient's `root` when no user is given; sysbench's own default is `sbtest`.
const DEFAULT_USER: &str = "root";
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const KNOWN_PARAMS: &str = "socket, sslmode (ssl-mode), sslrootcert (ssl-ca), connect_timeout";

/// A resolved MySQL target. `Debug` and [`MySqlConfig::redacted`] never show the password.
#[derive(Clone)]
pub struct MySqlConfig {
    host: String,
    port: u16,
    socket: Option<PathBuf>,
    user: String,
    dbname: Option<String>,
    tls: TlsMode,
    ssl_ca: Option<PathBuf>,
    connect_timeout: Duration,
    /// Client options without and with TLS, built once.
    pub(super) plain: Opts,
    pub(super) secure: Opts,
    /// The server's version string, read by the first connection and shared by clones.
    pub(super) version: Arc<OnceLock<String>>,
    /// The library fallback under `prefer`: the server offered no TLS once, so its later
    /// connections skip the attempt (the lean client reads the offer from each greeting).
    pub(super) no_tls_offered: Arc<AtomicBool>,
    /// The lean client's TLS configuration, built by the first connection that needs it.
    tls_client: Arc<OnceLock<Result<Arc<rustls::ClientConfig>, DbError>>>,
}

impl fmt::Debug for MySqlConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// The user's spelling of a TLS mode: ours (libpq's) or MySQL's `--ssl-mode` names.
fn parse_tls_mode(value: &str) -> Option<TlsMode> {
    Some(
        match value.to_ascii_lowercase().replace('_', "-").as_str() {
            "disable" | "disabled" => TlsMode::Disable,
            "prefer" | "preferred" | "allow" => TlsMode::Prefer,
            "require" | "required" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" | "verify-identity" => TlsMode::VerifyFull,
            _ => return None,
        },
    )
}

fn decode(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

impl MySqlConfig {
    /// Parses `mysql://user:pass@host:port/db?socket=…&sslmode=…&sslrootcert=…`; `tls`, when
    /// given, overrides the URL's `sslmode`.
    pub fn parse(url: &str, tls: Option<TlsMode>) -> Result<MySqlConfig, DbError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| DbError::invalid_target(format!("invalid MySQL URL: {e}")))?;
        if !matches!(parsed.scheme(), "mysql" | "mariadb") {
            return Err(DbError::invalid_target(format!(
                "a MySQL URL starts with mysql:// or mariadb://, not {}://",
                parsed.scheme()
            )));
        }
        let host = match parsed.host_str() {
            Some(h) if !h.is_empty() => decode(h.trim_start_matches('[').trim_end_matches(']')),
            _ => DEFAULT_HOST.to_string(),
        };
        let user = match parsed.username() {
            "" => DEFAULT_USER.to_string(),
            u => decode(u),
        };
        let password = parsed.password().map(decode);
        let dbname = Some(decode(parsed.path().trim_start_matches('/'))).filter(|d| !d.is_empty());
        let mut config = MySqlConfig {
            host,
            port: parsed.port().unwrap_or(DEFAULT_PORT),
            socket: None,
            user,
            dbname,
            tls: TlsMode::Prefer,
            ssl_ca: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            plain: Opts::default(),
            secure: Opts::default(),
            version: Arc::new(OnceLock::new()),
            no_tls_offered: Arc::new(AtomicBool::new(false)),
            tls_client: Arc::default(),
        };
        for (key, value) in parsed.query_pairs() {
            config.apply_param(&key, &value)?;
        }
        if let Some(mode) = tls {
            config.tls = mode;
        }
        config.plain = config.options(password.clone(), None);
        config.secure = config.options(password, Some(config.ssl_opts()));
        Ok(config)
    }

    fn apply_param(&mut self, key: &str, value: &str) -> Result<(), DbError> {
        match key {
            "socket" => self.socket = Some(PathBuf::from(value)),
            "sslmode" | "ssl-mode" | "ssl_mode" => {
                self.tls = parse_tls_mode(value).ok_or_else(|| {
                    DbError::invalid_target(format!(
                        "sslmode must be disable, prefer, require, verify-ca or verify-full, got {value:?}"
                    ))
                })?
            }
            "sslrootcert" | "ssl-ca" | "ssl_ca" => self.ssl_ca = Some(PathBuf::from(value)),
            "connect_timeout" => {
                let seconds: f64 = value.parse().ok().filter(|s: &f64| *s > 0.0).ok_or_else(|| {
                    DbError::invalid_target(format!(
                        "connect_timeout must be a positive number of seconds, got {value:?}"
                    ))
                })?;
                self.connect_timeout = Duration::from_secs_f64(seconds);
            }
            _ => {
                return Err(DbError::invalid_target(format!(
                    "unknown MySQL URL parameter {key:?}; known: {KNOWN_PARAMS}"
                )))
            }
        }
        Ok(())
    }

    /// The library fallback's TLS, as the mode asks: `prefer`/`require` encrypt without checking
    /// the certificate (MySQL's PREFERRED/REQUIRED), `verify-ca` checks the chain, `verify-full`
    /// also the host name (VERIFY_IDENTITY). With `sslrootcert` only that CA is trusted, else the
    /// webpki roots. (The lean client uses `driver::tls`, where `verify-ca` is chain-only.)
    /// Known gap: mysql_async 0.37.1 skips the name check by matching rustls's error text for
    /// "NotValidForName", which rustls 0.23.46 no longer prints, so `verify-ca` still refuses a
    /// certificate whose names do not cover the host (it acts like `verify-full`).
    fn ssl_opts(&self) -> SslOpts {
        let verify = matches!(self.tls, TlsMode::VerifyCa | TlsMode::VerifyFull);
        let mut ssl = SslOpts::default()
            .with_danger_accept_invalid_certs(!verify)
            .with_danger_skip_domain_validation(self.tls != TlsMode::VerifyFull);
        if let Some(ca) = &self.ssl_ca {
            ssl = ssl
                .with_root_certs(vec![ca.clone().into()])
                .with_disable_built_in_roots(true);
        }
        ssl
    }

    fn options(&self, password: Option<String>, ssl: Option<SslOpts>) -> Opts {
        let socket = self
            .socket
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        OptsBuilder::default()
            .ip_or_hostname(self.host.clone())
            .tcp_port(self.port)
            .socket(socket)
            // mysql_async would otherwise switch loopback TCP to the server's socket by itself.
            .prefer_socket(false)
            .user(Some(self.user.clone()))
            .pass(password)
            .db_name(self.dbname.clone())
            .ssl_opts(ssl)
            // Statement handles are ours to keep; the library's cache would only duplicate them.
            .stmt_cache_size(0)
            .into()
    }

    /// The URL without the password, safe for logs and results.
    pub fn redacted(&self) -> String {
        let enc = |s: &str| utf8_percent_encode(s, URL_COMPONENT).to_string();
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut url = format!(
            "mysql://{}@{host}:{}/{}",
            enc(&self.user),
            self.port,
            enc(self.dbname.as_deref().unwrap_or(""))
        );
        let mut params = Vec::new();
        if let Some(socket) = &self.socket {
            params.push(format!("socket={}", enc(&socket.to_string_lossy())));
        }
        if self.tls != TlsMode::Prefer {
            let mode = serde_json::to_value(self.tls).ok();
            let mode = mode.as_ref().and_then(|v| v.as_str()).unwrap_or("prefer");
            params.push(format!("sslmode={mode}"));
        }
        if !params.is_empty() {
            url.push('?');
            url.push_str(&params.join("&"));
        }
        url
    }

    pub fn tls_mode(&self) -> TlsMode {
        self.tls
    }

    /// The rustls configuration for this target's mode and `sslrootcert`, built once.
    pub(super) fn tls_client(&self) -> Result<Arc<rustls::ClientConfig>, DbError> {
        self.tls_client
            .get_or_init(|| {
                crate::driver::tls::client_config(self.tls, self.ssl_ca.as_deref(), None)
            })
            .clone()
    }

    pub(super) fn host(&self) -> &str {
        &self.host
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    pub fn socket(&self) -> Option<&PathBuf> {
        self.socket.as_ref()
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn dbname(&self) -> Option<&str> {
        self.dbname.as_deref()
    }

    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_url_with_password_and_defaults() {
        let c = MySqlConfig::parse("mysql://bench:s%40cret@127.0.0.1/sbtest", None).unwrap();
        assert_eq!(c.plain.ip_or_hostname(), "127.0.0.1");
        assert_eq!(c.plain.tcp_port(), 3306);
        assert_eq!(c.plain.pass(), Some("s@cret"));
        assert_eq!(c.dbname(), Some("sbtest"));
        assert_eq!(c.tls_mode(), TlsMode::Prefer);
        assert!(c.plain.ssl_opts().is_none() && c.secure.ssl_opts().is_some());
        assert!(!c.plain.prefer_socket());
        assert_eq!(c.redacted(), "mysql://bench@127.0.0.1:3306/sbtest");
        assert!(!format!("{c:?}").contains("cret"));
    }

    #[test]
    fn socket_tls_modes_and_user_default() {
        let c = MySqlConfig::parse(
            "mariadb://localhost/db?socket=/run/mysqld/mysqld.sock&ssl-mode=VERIFY_IDENTITY&ssl-ca=/tmp/ca.pem",
            None,
        )
        .unwrap();
        assert_eq!(c.user(), "root");
        assert_eq!(c.plain.socket(), Some("/run/mysqld/mysqld.sock"));
        assert_eq!(c.tls_mode(), TlsMode::VerifyFull);
        let ssl = c.secure.ssl_opts().unwrap();
        assert!(!ssl.accept_invalid_certs() && !ssl.skip_domain_validation());
        assert!(ssl.disable_built_in_roots() && ssl.root_certs().len() == 1);
        let overridden =
            MySqlConfig::parse("mysql://u@h/db?sslmode=require", Some(TlsMode::Disable));
        assert_eq!(overridden.unwrap().tls_mode(), TlsMode::Disable);
        let required = MySqlConfig::parse("mysql://u@h/db?sslmode=required", None).unwrap();
        assert!(required.secure.ssl_opts().unwrap().accept_invalid_certs());
    }

    #[test]
    fn bad_urls_are_invalid_targets() {
        for url in [
            "postgresql://u@h/db",
            "mysql://u@h/db?sslmode=sometimes",
            "mysql://u@h/db?bogus=1",
            "mysql://u@h/db?connect_timeout=-1",
        ] {
            let e = MySqlConfig::parse(url, None).unwrap_err();
            assert!(e.is_invalid_target(), "{url}: {e}");
        }
    }
}
