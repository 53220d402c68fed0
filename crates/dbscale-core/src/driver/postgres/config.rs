//! [`PgConfig`]: a PostgreSQL target resolved once from the user's URL, with libpq's defaults and
//! meanings. Nothing here reads the environment: the Python side folds `PGPASSWORD` and friends
//! into the URL before it gets here.

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use percent_encoding::{utf8_percent_encode, CONTROLS};

use super::conninfo;
use super::values::{
    os_user_name, parse_hostaddr, parse_port, parse_sslmode, parse_timeout, sslmode_name,
};
use crate::driver::{DbError, TlsMode, URL_COMPONENT};

const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
const DEFAULT_PORT: u16 = 5432;
const DEFAULT_APPLICATION_NAME: &str = "dbscale";
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgHost {
    /// Host name or IP address, reached over TCP.
    Tcp(String),
    /// Directory holding the server's Unix socket `.s.PGSQL.{port}`.
    SocketDir(PathBuf),
}

/// A resolved PostgreSQL target. `Debug` and [`PgConfig::redacted`] never show the password.
#[derive(Clone)]
pub struct PgConfig {
    host: PgHost,
    /// libpq's `hostaddr`: the address to connect to, while `host` names the server for TLS.
    hostaddr: Option<IpAddr>,
    port: u16,
    user: String,
    password: Option<String>,
    dbname: String,
    application_name: String,
    options: Option<String>,
    tls: TlsMode,
    ssl_root_cert: Option<PathBuf>,
    connect_timeout: Option<Duration>,
    /// The rustls client configuration, built on first use and shared by clones, so that
    /// reconnecting per transaction does not re-read certificates.
    pub(super) tls_client: Arc<OnceLock<Result<Arc<rustls::ClientConfig>, DbError>>>,
}

impl PgConfig {
    /// Parses a `postgresql://` URL or a libpq `key=value` string of one host; `tls` overrides
    /// `sslmode`. Several hosts are a [`super::PgTarget`].
    pub fn parse(url: &str, tls: Option<TlsMode>) -> Result<PgConfig, DbError> {
        Self::from_pairs(conninfo::parse(url)?, tls)
    }

    /// The config of keyword pairs (one host).
    pub(super) fn from_pairs(
        pairs: conninfo::Pairs,
        tls: Option<TlsMode>,
    ) -> Result<Self, DbError> {
        let mut host = None;
        let mut hostaddr = None;
        let mut port = DEFAULT_PORT;
        let mut user = None;
        let mut password = None;
        let mut dbname = None;
        let mut application_name = DEFAULT_APPLICATION_NAME.to_string();
        let mut options = None;
        let mut sslmode = TlsMode::Prefer;
        let mut ssl_root_cert = None;
        let mut connect_timeout = Some(DEFAULT_CONNECT_TIMEOUT);
        for (key, value) in pairs {
            match key.as_str() {
                "host" if !value.is_empty() => host = Some(value),
                "host" => {}
                "hostaddr" if value.is_empty() => hostaddr = None,
                "hostaddr" => hostaddr = Some(parse_hostaddr(&value)?),
                "port" => port = parse_port(&value)?,
                "user" => user = Some(value).filter(|v| !v.is_empty()),
                "password" => password = Some(value),
                "dbname" => dbname = Some(value).filter(|v| !v.is_empty()),
                "application_name" => application_name = value,
                "options" => options = Some(value).filter(|v| !v.is_empty()),
                "sslmode" => sslmode = parse_sslmode(&value)?,
                "sslrootcert" => ssl_root_cert = Some(PathBuf::from(value)),
                "connect_timeout" => connect_timeout = parse_timeout(&value)?,
                other => {
                    return Err(DbError::invalid_target(format!(
                        "unsupported connection parameter \"{other}\""
                    )))
                }
            }
        }
        let host = match host {
            Some(h) if h.contains(',') => {
                return Err(DbError::invalid_target(
                    "several hosts where one is expected",
                ))
            }
            Some(h) if h.starts_with('/') => PgHost::SocketDir(PathBuf::from(h)),
            Some(h) => PgHost::Tcp(h),
            None if hostaddr.is_some() => PgHost::Tcp(hostaddr.expect("checked").to_string()),
            None if Path::new(DEFAULT_SOCKET_DIR).is_dir() => {
                PgHost::SocketDir(PathBuf::from(DEFAULT_SOCKET_DIR))
            }
            None => PgHost::Tcp("localhost".to_string()),
        };
        let user = match user {
            Some(u) => u,
            None => os_user_name().ok_or_else(|| {
                DbError::invalid_target("no user in the URL and the OS user name is unknown")
            })?,
        };
        Ok(PgConfig {
            host,
            hostaddr,
            port,
            dbname: dbname.unwrap_or_else(|| user.clone()),
            user,
            password,
            application_name,
            options,
            tls: tls.unwrap_or(sslmode),
            ssl_root_cert,
            connect_timeout,
            tls_client: Arc::default(),
        })
    }

    /// The target as a URL without the password, safe for logs and results.
    pub fn redacted(&self) -> String {
        let user = utf8_percent_encode(&self.user, URL_COMPONENT);
        let dbname = utf8_percent_encode(&self.dbname, URL_COMPONENT);
        let mut url = match &self.host {
            PgHost::Tcp(h) if h.contains(':') => {
                format!("postgresql://{user}@[{h}]:{}/{dbname}", self.port)
            }
            PgHost::Tcp(h) => {
                let h = utf8_percent_encode(h, URL_COMPONENT);
                format!("postgresql://{user}@{h}:{}/{dbname}", self.port)
            }
            PgHost::SocketDir(dir) => {
                let dir = utf8_percent_encode(&dir.to_string_lossy(), CONTROLS).to_string();
                format!(
                    "postgresql://{user}@/{dbname}?host={dir}&port={}",
                    self.port
                )
            }
        };
        let mut param = |key: &str, value: &str| {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(key);
            url.push('=');
            url.push_str(value);
        };
        if let Some(addr) = self.hostaddr {
            param("hostaddr", &addr.to_string());
        }
        if self.tls != TlsMode::Prefer && matches!(self.host, PgHost::Tcp(_)) {
            param("sslmode", sslmode_name(self.tls));
        }
        url
    }

    pub fn host(&self) -> &PgHost {
        &self.host
    }

    /// The address to connect to instead of resolving the host name (libpq's `hostaddr`).
    pub fn hostaddr(&self) -> Option<IpAddr> {
        self.hostaddr
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    pub fn application_name(&self) -> &str {
        &self.application_name
    }

    pub fn tls_mode(&self) -> TlsMode {
        self.tls
    }

    pub fn ssl_root_cert(&self) -> Option<&Path> {
        self.ssl_root_cert.as_deref()
    }

    /// `None` waits forever (`connect_timeout=0`).
    pub fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    /// The Unix socket file for a socket-directory host.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.host {
            PgHost::SocketDir(dir) => Some(dir.join(format!(".s.PGSQL.{}", self.port))),
            PgHost::Tcp(_) => None,
        }
    }

    pub(super) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    pub(super) fn options(&self) -> Option<&str> {
        self.options.as_deref()
    }
}

impl fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgConfig")
            .field("host", &self.host)
            .field("hostaddr", &self.hostaddr)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("dbname", &self.dbname)
            .field("application_name", &self.application_name)
            .field("options", &self.options)
            .field("tls", &self.tls)
            .field("ssl_root_cert", &self.ssl_root_cert)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> PgConfig {
        PgConfig::parse(url, None).unwrap()
    }

    #[test]
    fn uri_fields_and_defaults() {
        let c = parse("postgresql://bob:s3cret@db.example:6543/sales?connect_timeout=3");
        assert_eq!(c.host(), &PgHost::Tcp("db.example".into()));
        assert_eq!((c.port(), c.user(), c.dbname()), (6543, "bob", "sales"));
        assert_eq!(c.password(), Some("s3cret"));
        assert_eq!(c.connect_timeout(), Some(Duration::from_secs(3)));
        assert_eq!(c.application_name(), "dbscale");
        assert_eq!(c.tls_mode(), TlsMode::Prefer);
        let c = parse("postgres://bob@db.example");
        assert_eq!((c.port(), c.dbname()), (5432, "bob"));
        assert_eq!(c.connect_timeout(), Some(Duration::from_secs(10)));
    }

    #[test]
    fn default_host_and_user() {
        let c = parse("postgresql://");
        let expected = if Path::new(DEFAULT_SOCKET_DIR).is_dir() {
            PgHost::SocketDir(DEFAULT_SOCKET_DIR.into())
        } else {
            PgHost::Tcp("localhost".into())
        };
        assert_eq!(c.host(), &expected);
        assert_eq!(c.user(), os_user_name().unwrap());
        assert_eq!(c.dbname(), c.user());
    }

    #[test]
    fn socket_dirs() {
        for url in [
            "postgresql://u@%2Ftmp%2Fpg:5433/db",
            "postgresql://u@/db?host=/tmp/pg&port=5433",
            "host=/tmp/pg port=5433 user=u dbname=db",
        ] {
            let c = parse(url);
            assert_eq!(c.host(), &PgHost::SocketDir("/tmp/pg".into()), "{url}");
            assert_eq!(c.socket_path().unwrap(), Path::new("/tmp/pg/.s.PGSQL.5433"));
            assert_eq!(c.dbname(), "db");
        }
    }

    #[test]
    fn hostaddr_alone_or_beside_a_name() {
        let c = parse("hostaddr=127.0.0.1 user=u");
        assert_eq!(c.host(), &PgHost::Tcp("127.0.0.1".into()));
        let c = parse("postgresql://u@db.example/d?hostaddr=::1");
        assert_eq!(c.host(), &PgHost::Tcp("db.example".into()));
        assert_eq!(c.hostaddr(), Some("::1".parse().unwrap()));
    }

    #[test]
    fn tls_options() {
        let c = parse("postgresql://u@h/d?sslmode=verify-full&sslrootcert=/ca.pem");
        assert_eq!(c.tls_mode(), TlsMode::VerifyFull);
        assert_eq!(c.ssl_root_cert(), Some(Path::new("/ca.pem")));
        let c = PgConfig::parse("postgresql://u@h/d?sslmode=require", Some(TlsMode::Disable));
        assert_eq!(c.unwrap().tls_mode(), TlsMode::Disable);
        assert_eq!(parse("sslmode=allow user=u").tls_mode(), TlsMode::Prefer);
    }

    #[test]
    fn invalid_values_name_the_problem() {
        for (url, needle) in [
            ("postgresql://u@h:0/d", "invalid port"),
            ("postgresql://u@h:99999/d", "invalid port"),
            ("postgresql://u@h:x/d", "invalid port"),
            ("postgresql://u@h/d?sslmode=maybe", "invalid sslmode"),
            ("postgresql://u@h/d?connect_timeout=soon", "connect_timeout"),
            (
                "postgresql://u@h/d?fallback_application_name=x",
                "fallback_application_name",
            ),
            ("user=u colour=blue", "colour"),
            ("host=a,b user=u", "several hosts"),
            ("hostaddr=db.example user=u", "invalid hostaddr"),
        ] {
            let err = PgConfig::parse(url, None).unwrap_err();
            assert!(err.is_invalid_target(), "{url}");
            assert!(err.message.contains(needle), "{url}: {}", err.message);
            assert!(!err.message.contains('\n'));
        }
    }

    #[test]
    fn redaction_never_shows_the_password() {
        let urls = [
            "postgresql://bob:hunter2@db.example:6543/sales?sslmode=require",
            "postgresql://bob:hunter2@[::1]/sales",
            "postgresql://bob:hunter2@db.example/sales?hostaddr=10.1.2.3&sslmode=verify-full",
            "postgresql://bob@%2Ftmp%2Fpg/sales?password=hunter2",
            "host=/tmp/pg user=bob password=hunter2",
        ];
        for url in urls {
            let c = parse(url);
            assert!(!c.redacted().contains("hunter2"), "{}", c.redacted());
            assert!(!format!("{c:?}").contains("hunter2"), "{c:?}");
            // The redacted form is itself a valid target naming the same server.
            let again = parse(&c.redacted());
            assert_eq!((again.host(), again.port()), (c.host(), c.port()));
            assert_eq!((again.user(), again.dbname()), (c.user(), c.dbname()));
            assert_eq!(again.tls_mode(), c.tls_mode());
            assert_eq!(again.hostaddr(), c.hostaddr());
        }
        assert_eq!(
            parse(urls[0]).redacted(),
            "postgresql://bob@db.example:6543/sales?sslmode=require"
        );
        assert_eq!(
            parse(urls[4]).redacted(),
            "postgresql://bob@/bob?host=/tmp/pg&port=5432"
        );
    }
}
