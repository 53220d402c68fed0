//! The lean client's connection phase: socket, the server's greeting, TLS when the mode asks for
//! it (the SSL request, then the handshake on the same TCP stream), the handshake response and
//! authentication (`mysql_native_password`, and `caching_sha2_password` with its full exchange
//! over TLS or a Unix socket). Anything else goes back to the caller as [`Unsupported`].
//!
//! Unix sockets are never encrypted, as with the MySQL clients: the server counts them secure.

use super::auth;
use super::config::MySqlConfig;
use super::errors::connect_failure;
use super::wire::{self, PacketBuffer, Reader, ERR, OK};
use crate::driver::tls::{self, tls_error};
use crate::driver::transport::Transport;
use crate::driver::{ConnectFailure, DbError, TlsMode};

const CLIENT_LONG_PASSWORD: u32 = 0x1;
const CLIENT_LONG_FLAG: u32 = 0x4;
const CLIENT_CONNECT_WITH_DB: u32 = 0x8;
/// Lets `LOAD DATA LOCAL INFILE` run; the client sends only the data it was handed for its own
/// statement (see local_infile.rs), never a file the server names.
const CLIENT_LOCAL_FILES: u32 = 0x80;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_SSL: u32 = 0x800;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_STATEMENTS: u32 = 0x1_0000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const CLIENT_PLUGIN_AUTH_LENENC: u32 = 0x20_0000;
pub(super) const CLIENT_DEPRECATE_EOF: u32 = 0x100_0000;
const WANTED: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_LONG_FLAG
    | CLIENT_LOCAL_FILES
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_STATEMENTS
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC
    | CLIENT_DEPRECATE_EOF;
/// utf8mb4_general_ci, as mysql_async asks for.
const UTF8MB4: u8 = 45;

/// Why the lean client handed a connection back: the library does these.
#[derive(Debug)]
pub(super) enum Unsupported {
    /// An authentication plugin or step the lean client does not speak.
    Auth,
}

/// An authenticated session, ready for commands.
pub(super) struct Established {
    pub(super) transport: Transport,
    pub(super) reader: PacketBuffer,
    pub(super) capabilities: u32,
    pub(super) version: String,
    pub(super) connection_id: u32,
}

/// What the server's greeting (protocol 10) says.
struct Greeting {
    version: String,
    connection_id: u32,
    nonce: Vec<u8>,
    capabilities: u32,
    plugin: String,
}

/// Connects and authenticates. `Ok(Err(_))` asks the caller to use the library instead.
pub(super) async fn establish(
    config: &MySqlConfig,
) -> Result<Result<Established, Unsupported>, DbError> {
    let mut transport = open_socket(config).await?;
    let mut reader = PacketBuffer::new();
    let (seq, payload) = read_packet(&mut transport, &mut reader).await?;
    let greeting = Greeting::parse(&payload)?;
    let encrypt = wants_tls(config, greeting.capabilities)?;
    let mut caps = WANTED & greeting.capabilities;
    if config.dbname().is_some() {
        caps |= CLIENT_CONNECT_WITH_DB;
    }
    let mut seq = seq.wrapping_add(1);
    let mut out = Vec::with_capacity(256);
    if encrypt {
        caps |= CLIENT_SSL;
        let at = wire::start_packet(&mut out, seq);
        put_client_header(&mut out, caps);
        wire::finish_packet(&mut out, at)?;
        transport.write_all(&out).await.map_err(lost)?;
        let tcp = transport.into_tcp().map_err(|e| tls_error(e.to_string()))?;
        transport = Transport::tls(tls::handshake(config.tls_client()?, config.host(), tcp).await?);
        seq = seq.wrapping_add(1);
    }
    let password = config.plain.pass().unwrap_or("").as_bytes();
    let plugin = match auth::scramble(&greeting.plugin, password, &greeting.nonce) {
        Some(_) => greeting.plugin.clone(),
        None => auth::NATIVE.to_string(),
    };
    let response = auth::scramble(&plugin, password, &greeting.nonce).unwrap_or_default();
    out.clear();
    let at = wire::start_packet(&mut out, seq);
    put_client_header(&mut out, caps);
    out.extend_from_slice(config.user().as_bytes());
    out.push(0);
    if caps & CLIENT_PLUGIN_AUTH_LENENC != 0 {
        wire::put_lenenc_bytes(&mut out, &response);
    } else {
        out.push(response.len() as u8);
        out.extend_from_slice(&response);
    }
    if let Some(db) = config.dbname() {
        out.extend_from_slice(db.as_bytes());
        out.push(0);
    }
    out.extend_from_slice(plugin.as_bytes());
    out.push(0);
    wire::finish_packet(&mut out, at)?;
    transport.write_all(&out).await.map_err(lost)?;
    let secure = encrypt || config.socket().is_some();
    let mut session = Established {
        transport,
        reader,
        capabilities: caps,
        version: greeting.version,
        connection_id: greeting.connection_id,
    };
    let verdict = session.authenticate(password, plugin, secure).await?;
    Ok(verdict.map(|()| session))
}

impl Greeting {
    fn parse(payload: &[u8]) -> Result<Greeting, DbError> {
        let mut r = Reader::new(payload);
        match r.u8() {
            10 => {}
            ERR => {
                let (code, message) = wire::err_parts(payload);
                return Err(DbError::mysql_connect(connect_failure(code), code, message));
            }
            v => return Err(protocol_error(format!("handshake protocol {v} is not 10"))),
        }
        let version = String::from_utf8_lossy(r.nul_str()).into_owned();
        let connection_id = r.uint(4) as u32;
        let mut nonce = r.take(8).to_vec();
        r.take(1);
        let mut capabilities = r.uint(2) as u32;
        r.take(3); // character set, status
        capabilities |= (r.uint(2) as u32) << 16;
        let nonce_len = usize::from(r.u8());
        r.take(10);
        let rest = r.take(nonce_len.saturating_sub(8).max(13));
        nonce.extend_from_slice(rest.strip_suffix(&[0]).unwrap_or(rest));
        let plugin = String::from_utf8_lossy(r.nul_str()).into_owned();
        if capabilities & CLIENT_PROTOCOL_41 == 0 {
            return Err(protocol_error(
                "the server does not speak protocol 4.1".into(),
            ));
        }
        Ok(Greeting {
            connection_id,
            // MariaDB prefixes its version with "5.5.5-" for old clients.
            version: version
                .strip_prefix("5.5.5-")
                .unwrap_or(&version)
                .to_string(),
            nonce,
            capabilities,
            plugin,
        })
    }
}

impl Established {
    /// Reads the server's verdict, answering auth switches and caching_sha2's requests.
    async fn authenticate(
        &mut self,
        password: &[u8],
        mut plugin: String,
        secure: bool,
    ) -> Result<Result<(), Unsupported>, DbError> {
        loop {
            let (seq, payload) = read_packet(&mut self.transport, &mut self.reader).await?;
            let reply = match payload.first().copied() {
                Some(OK) => return Ok(Ok(())),
                Some(ERR) => {
                    let (code, message) = wire::err_parts(&payload);
                    return Err(DbError::mysql_connect(connect_failure(code), code, message));
                }
                // Auth switch: scramble the new nonce with the plugin the server names.
                Some(wire::EOF) => {
                    let mut r = Reader::new(&payload[1..]);
                    plugin = String::from_utf8_lossy(r.nul_str()).into_owned();
                    let nonce = r.bytes.strip_suffix(&[0]).unwrap_or(r.bytes).to_vec();
                    match auth::scramble(&plugin, password, &nonce) {
                        Some(response) => response,
                        None => return Ok(Err(Unsupported::Auth)),
                    }
                }
                // caching_sha2_password: 3 = the fast path succeeded (an OK follows); 4 = the
                // server wants the password itself, which may go in clear only over TLS or a
                // socket (without them it takes RSA: the library's job).
                Some(0x01) if plugin == auth::CACHING_SHA2 => match payload.get(1) {
                    Some(3) => continue,
                    Some(4) if secure => {
                        let mut clear = password.to_vec();
                        clear.push(0);
                        clear
                    }
                    _ => return Ok(Err(Unsupported::Auth)),
                },
                _ => return Ok(Err(Unsupported::Auth)),
            };
            let mut out = Vec::with_capacity(reply.len() + 4);
            let at = wire::start_packet(&mut out, seq.wrapping_add(1));
            out.extend_from_slice(&reply);
            wire::finish_packet(&mut out, at)?;
            self.transport.write_all(&out).await.map_err(lost)?;
        }
    }
}

async fn open_socket(config: &MySqlConfig) -> Result<Transport, DbError> {
    if let Some(path) = config.socket() {
        let stream = tokio::net::UnixStream::connect(path)
            .await
            .map_err(|e| unreachable(format!("connection to {} failed: {e}", path.display())))?;
        return Transport::unix(stream).map_err(|e| unreachable(e.to_string()));
    }
    let (host, port) = (config.host(), config.port());
    let tcp = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| unreachable(format!("connection to {host}:{port} failed: {e}")))?;
    tcp.set_nodelay(true)
        .map_err(|e| unreachable(format!("cannot set TCP_NODELAY: {e}")))?;
    Transport::tcp(tcp).map_err(|e| unreachable(e.to_string()))
}

/// TLS or not, from the mode and what the server offers; a mode that needs TLS from a server
/// without it is an error, as in libpq and the MySQL clients.
fn wants_tls(config: &MySqlConfig, server_caps: u32) -> Result<bool, DbError> {
    if config.socket().is_some() {
        return Ok(false);
    }
    let offered = server_caps & CLIENT_SSL != 0;
    match config.tls_mode() {
        TlsMode::Disable => Ok(false),
        TlsMode::Prefer => Ok(offered),
        _ if offered => Ok(true),
        _ => Err(tls_error(
            "the server does not offer TLS, which this sslmode needs (prefer or disable do not)",
        )),
    }
}

/// The fields the SSL request and the handshake response begin with.
fn put_client_header(out: &mut Vec<u8>, caps: u32) {
    out.extend_from_slice(&caps.to_le_bytes());
    out.extend_from_slice(&(wire::MAX_PAYLOAD as u32).to_le_bytes());
    out.push(UTF8MB4);
    out.extend_from_slice(&[0; 23]);
}

/// One whole packet, copied out (the connection phase only: not the hot path).
pub(super) async fn read_packet(
    transport: &mut Transport,
    reader: &mut PacketBuffer,
) -> Result<(u8, Vec<u8>), DbError> {
    loop {
        if let Some(packet) = reader.next_packet() {
            return Ok((packet.seq, reader.payload(&packet).to_vec()));
        }
        let n = transport.read(reader.spare()).await.map_err(lost)?;
        if n == 0 {
            return Err(DbError::connection_lost("the server closed the connection"));
        }
        reader.filled(n);
    }
}

fn lost(e: std::io::Error) -> DbError {
    DbError::connection_lost(format!("talking to the server failed: {e}"))
}

fn unreachable(message: String) -> DbError {
    DbError::connect(ConnectFailure::Unreachable, message)
}

fn protocol_error(message: String) -> DbError {
    DbError::connect(ConnectFailure::Protocol, message)
}
