//! TLS with rustls (ring provider) for both clients, under libpq's `sslmode` meanings: `require`
//! encrypts without checking the certificate (unless a root certificate is given, which makes it
//! `verify-ca`, as in libpq), `verify-ca` checks the chain but not the host name, `verify-full`
//! checks both. MySQL's REQUIRED, VERIFY_CA and VERIFY_IDENTITY map onto the same three.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::driver::{ConnectFailure, DbError, TlsMode};

/// Runs the TLS handshake with `host` on a TCP stream whose server agreed to TLS.
pub(crate) async fn handshake(
    client: Arc<ClientConfig>,
    host: &str,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>, DbError> {
    // Without name checks any syntactically valid name will do; rustls needs one for SNI.
    let name = ServerName::try_from(host.to_string())
        .or_else(|_| ServerName::try_from("localhost".to_string()))
        .expect("valid server name");
    TlsConnector::from(client)
        .connect(name, tcp)
        .await
        .map_err(|e| {
            tls_error(format!(
                "TLS handshake with {host} failed: {}",
                in_words(&e)
            ))
        })
}

/// A handshake failure as a sentence, not rustls's debug text.
fn in_words(error: &std::io::Error) -> String {
    let Some(tls) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    else {
        return error.to_string();
    };
    match tls {
        rustls::Error::InvalidCertificate(problem) => match problem {
            CertificateError::UnknownIssuer => {
                "the server's certificate is not signed by a root you trust (sslrootcert)"
                    .to_string()
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired".to_string()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet (check the clocks)".to_string()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "the server's certificate does not name this host (verify-full checks the \
                 name; verify-ca does not)"
                    .to_string()
            }
            CertificateError::BadSignature => {
                "the server's certificate has a bad signature".to_string()
            }
            CertificateError::Revoked => "the server's certificate is revoked".to_string(),
            // webpki's CaUsedAsEndEntity, only reachable as text through rustls's OtherError: a
            // server certificate marked as a CA that is not one of the given roots.
            CertificateError::Other(other)
                if format!("{other:?}").contains("CaUsedAsEndEntity") =>
            {
                "the server's certificate is not signed by a root you trust (it is a CA \
                 certificate itself, and not one of the sslrootcert roots)"
                    .to_string()
            }
            other => without_links(&format!("the server's certificate was refused ({other:?})")),
        },
        rustls::Error::AlertReceived(alert) => {
            format!("the server refused the TLS session ({alert:?})")
        }
        other => without_links(&other.to_string()),
    }
}

/// The library's text without the links to its own documentation some of its errors carry:
/// the user is told what went wrong, not pointed at a crate's internals.
fn without_links(text: &str) -> String {
    let mut rest = text.to_string();
    // "(see https://...)" whole, then any bare link left.
    while let Some(at) = rest.find("(see http") {
        let close = rest[at..].find(')').map_or(rest.len(), |i| at + i + 1);
        rest.replace_range(at..close, "");
    }
    let kept: Vec<&str> = rest
        .split_whitespace()
        .filter(|word| !(word.contains("https://") || word.contains("http://")))
        .collect();
    kept.join(" ")
        .trim_end_matches([' ', ':', ';', ','])
        .to_string()
}

pub(crate) fn tls_error(message: impl Into<String>) -> DbError {
    DbError::connect(ConnectFailure::Tls, message)
}

/// The client configuration for a mode and optional root certificate; `alpn` is the protocol
/// name to announce, if any.
pub(crate) fn client_config(
    mode: TlsMode,
    root_cert: Option<&Path>,
    alpn: Option<&[u8]>,
) -> Result<Arc<ClientConfig>, DbError> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(format!("TLS setup failed: {e}")))?;
    let verify_chain =
        matches!(mode, TlsMode::VerifyCa | TlsMode::VerifyFull) || root_cert.is_some();
    let mut client = if !verify_chain {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(RelaxedVerifier {
                provider,
                chain: None,
                check_name: false,
                roots: Vec::new(),
            }))
            .with_no_client_auth()
    } else {
        let roots = Arc::new(root_store(root_cert)?);
        let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| tls_error(format!("TLS setup failed: {e}")))?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(RelaxedVerifier {
                provider,
                chain: Some(webpki),
                check_name: mode == TlsMode::VerifyFull,
                roots: pinned_roots(root_cert)?,
            }))
            .with_no_client_auth()
    };
    client.alpn_protocols = alpn.map(|name| vec![name.to_vec()]).unwrap_or_default();
    Ok(Arc::new(client))
}

/// Trust anchors: the `sslrootcert` file, or the Mozilla roots when none (or `system`) is given.
fn root_store(root_cert: Option<&Path>) -> Result<RootCertStore, DbError> {
    let mut roots = RootCertStore::empty();
    let pinned = pinned_roots(root_cert)?;
    if pinned.is_empty() {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    for cert in pinned {
        roots.add(cert).map_err(|e| {
            tls_error(format!(
                "sslrootcert holds a certificate that cannot be a root: {e:?}"
            ))
        })?;
    }
    Ok(roots)
}

/// The certificates of the `sslrootcert` file (none for `system` or no file).
fn pinned_roots(root_cert: Option<&Path>) -> Result<Vec<CertificateDer<'static>>, DbError> {
    let Some(path) = root_cert.filter(|p| *p != Path::new("system")) else {
        return Ok(Vec::new());
    };
    let unreadable = |e: &dyn std::fmt::Display| {
        tls_error(format!("cannot read sslrootcert {}: {e}", path.display()))
    };
    let file = File::open(path).map_err(|e| unreadable(&e))?;
    let certs = rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(&e))?;
    if certs.is_empty() {
        return Err(unreadable(&"no PEM certificate in the file"));
    }
    Ok(certs)
}

/// libpq's checks. Without a `chain` (`sslmode=require` and no root certificate): encryption
/// only; the handshake signature is still checked, so the session keys belong to whoever holds
/// the certificate's key. With one: the full webpki check, and for `verify-ca` (no
/// `check_name`) a name mismatch is accepted (webpki checks the name only after the chain, so a
/// name error means the chain verified). As libpq (OpenSSL) does, a server certificate that is
/// itself one of the given roots is trusted even when it is marked as a CA, which webpki refuses
/// as an end entity (a self-signed certificate made with `CA:TRUE`, common for test servers).
#[derive(Debug)]
struct RelaxedVerifier {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    roots: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for RelaxedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(_)))
                if self.roots.iter().any(|root| root == end_entity) =>
            {
                if self.check_name {
                    let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
                    rustls::client::verify_server_name(&parsed, server_name)?;
                }
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod link_tests {
    use super::without_links;

    #[test]
    fn library_links_are_left_out_of_messages() {
        assert_eq!(
            without_links(
                "invalid peer certificate: Other(x) (see https://docs.rs/rustls/latest/a.html)"
            ),
            "invalid peer certificate: Other(x)"
        );
        assert_eq!(without_links("plain words stay"), "plain words stay");
    }
}
