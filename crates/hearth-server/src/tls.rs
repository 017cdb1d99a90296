//! HTTPS for the server: rustls (with the ring provider). The handshakes
//! run in the connection layer (`conn.rs`): each in its connection's own
//! task, once the connection has its place under the caps, and bounded by
//! `--handshake-timeout`, so that a slow or silent client holds up no one
//! else and cannot take more than its share of the connections.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// The server's certificate chain and private key, PEM files (`hearth
/// server --tls-cert --tls-key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// Why the certificate or key could not be used.
#[derive(Debug, thiserror::Error)]
#[error("TLS: {0}")]
pub struct TlsError(String);

/// A loaded certificate and key, ready to serve.
pub struct Tls {
    acceptor: TlsAcceptor,
}

impl Tls {
    /// Reads and checks the PEM files (the key must match the
    /// certificate).
    pub fn load(files: &TlsFiles) -> Result<Tls, TlsError> {
        let certs = CertificateDer::pem_file_iter(&files.cert)
            .and_then(|i| i.collect::<Result<Vec<_>, _>>())
            .map_err(|e| TlsError(format!("{}: {e}", files.cert.display())))?;
        if certs.is_empty() {
            return Err(TlsError(format!(
                "{}: no certificate in the file",
                files.cert.display()
            )));
        }
        let key = PrivateKeyDer::from_pem_file(&files.key)
            .map_err(|e| TlsError(format!("{}: {e}", files.key.display())))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| {
                TlsError(format!(
                    "{} with {}: {e}",
                    files.cert.display(),
                    files.key.display()
                ))
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// The handshake side, for the connection layer (`conn.rs`), which
    /// runs each handshake in its connection's own task, under the
    /// connection caps and `--handshake-timeout`.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        self.acceptor.clone()
    }
}
