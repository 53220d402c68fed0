//! The startup exchange: StartupMessage, authentication (trust, cleartext, MD5, SCRAM-SHA-256),
//! then the server's parameters up to the first ReadyForQuery.

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};

use crate::driver::{ConnectFailure, DbError};

use super::backend::{split_cstr, ServerError};
use super::config::PgConfig;
use super::connection::PgConnection;
use super::frontend;

const AUTH_OK: i32 = 0;
const AUTH_CLEARTEXT: i32 = 3;
const AUTH_MD5: i32 = 5;
const AUTH_SASL: i32 = 10;
const AUTH_SASL_CONTINUE: i32 = 11;
const AUTH_SASL_FINAL: i32 = 12;

impl PgConnection {
    /// Runs the startup exchange on a fresh transport.
    pub(super) async fn start_session(&mut self, config: &PgConfig) -> Result<(), DbError> {
        let mut params = vec![
            ("user", config.user()),
            ("database", config.dbname()),
            ("application_name", config.application_name()),
            ("client_encoding", "UTF8"),
        ];
        if let Some(options) = config.options() {
            params.push(("options", options));
        }
        self.wbuf.clear();
        frontend::startup(&mut self.wbuf, &params)?;
        self.send().await?;
        self.authenticate(config).await?;
        loop {
            let frame = self.next_frame().await?;
            let body = self.reader.body(&frame);
            match frame.tag {
                b'K' if body.len() >= 8 => {
                    self.backend_pid = i32::from_be_bytes(body[..4].try_into().expect("4 bytes"));
                    self.cancel_secret =
                        i32::from_be_bytes(body[4..8].try_into().expect("4 bytes"));
                }
                // NegotiateProtocolVersion: we ask for nothing optional, so nothing to adjust.
                b'v' => {}
                b'E' => return Err(ServerError::parse(body).into_db_error()),
                b'Z' => {
                    self.ready_for_query(&frame);
                    return Ok(());
                }
                other => return Err(self.unexpected(other)),
            }
        }
    }

    /// Answers authentication requests until AuthenticationOk.
    async fn authenticate(&mut self, config: &PgConfig) -> Result<(), DbError> {
        let mut scram: Option<ScramSha256> = None;
        loop {
            let frame = self.next_frame().await?;
            let body = self.reader.body(&frame);
            match frame.tag {
                b'R' => {}
                b'E' => return Err(ServerError::parse(body).into_db_error()),
                b'v' => continue,
                other => return Err(self.unexpected(other)),
            }
            let Some(code) = body.get(..4) else {
                return Err(self.unexpected(b'R'));
            };
            let code = i32::from_be_bytes(code.try_into().expect("4 bytes"));
            let data = &body[4..];
            self.wbuf.clear();
            match code {
                AUTH_OK => return Ok(()),
                AUTH_CLEARTEXT => {
                    let password = required_password(config)?;
                    frontend::password(&mut self.wbuf, password.as_bytes())?;
                }
                AUTH_MD5 => {
                    let password = required_password(config)?;
                    let salt: [u8; 4] = data
                        .get(..4)
                        .and_then(|s| s.try_into().ok())
                        .ok_or_else(|| auth_error("malformed MD5 request from the server"))?;
                    let hash = md5_hash(config.user().as_bytes(), password.as_bytes(), salt);
                    frontend::password(&mut self.wbuf, hash.as_bytes())?;
                }
                AUTH_SASL => {
                    let offered = sasl_mechanisms(data);
                    if !offered.contains(&SCRAM_SHA_256) {
                        return Err(auth_error(format!(
                            "the server offers SASL mechanisms {offered:?}, none supported (SCRAM-SHA-256)"
                        )));
                    }
                    let password = required_password(config)?;
                    // No channel binding: rustls gives no tls-server-end-point hash, and the
                    // server accepts a client that says it does not support binding.
                    let session = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
                    frontend::sasl_initial_response(&mut self.wbuf, SCRAM_SHA_256, session.message())?;
                    scram = Some(session);
                }
                AUTH_SASL_CONTINUE => {
                    let session = scram
                        .as_mut()
                        .ok_or_else(|| auth_error("SCRAM continuation before its start"))?;
                    session
                        .update(data)
                        .map_err(|e| auth_error(format!("SCRAM exchange failed: {e}")))?;
                    frontend::sasl_response(&mut self.wbuf, session.message())?;
                }
                AUTH_SASL_FINAL => {
                    let session = scram
                        .as_mut()
                        .ok_or_else(|| auth_error("SCRAM final message before its start"))?;
                    session.finish(data).map_err(|e| {
                        auth_error(format!("the server's SCRAM signature did not verify: {e}"))
                    })?;
                    continue;
                }
                other => {
                    return Err(auth_error(format!(
                        "unsupported authentication method (code {other}: {}); use trust, password, md5 or scram-sha-256",
                        method_name(other)
                    )))
                }
            }
            self.send().await?;
        }
    }
}

fn required_password(config: &PgConfig) -> Result<&str, DbError> {
    config.password().ok_or_else(|| {
        auth_error(format!(
            "the server asks for a password for user \"{}\" but none was given",
            config.user()
        ))
    })
}

fn auth_error(message: impl Into<String>) -> DbError {
    DbError::connect(ConnectFailure::Authentication, message)
}

/// The NUL-separated mechanism list of AuthenticationSASL.
fn sasl_mechanisms(mut data: &[u8]) -> Vec<&str> {
    let mut names = Vec::new();
    while !data.is_empty() && data[0] != 0 {
        let (name, rest) = split_cstr(data);
        names.push(std::str::from_utf8(name).unwrap_or("?"));
        data = rest;
    }
    names
}

fn method_name(code: i32) -> &'static str {
    match code {
        2 => "Kerberos V5",
        6 => "SCM credentials",
        7 | 8 => "GSSAPI",
        9 => "SSPI",
        _ => "unknown",
    }
}
