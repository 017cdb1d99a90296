//! HTTPS for the server: rustls (with the ring provider) over the TCP
//! listener, one handshake task per connection so that a slow or silent
//! client holds up no one else.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_rustls::server::TlsStream;
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

/// Longest a TLS handshake may take before the connection is dropped.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// Handshaken connections waiting for the HTTP server to take them.
const BACKLOG: usize = 64;

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

    /// Accepts TCP connections on `tcp` and hands on those whose
    /// handshake succeeds; the others are dropped.
    pub fn listen(&self, tcp: TcpListener) -> std::io::Result<TlsListener> {
        let addr = tcp.local_addr()?;
        let (tx, rx) = mpsc::channel(BACKLOG);
        let acceptor = self.acceptor.clone();
        let task = tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(c) => c,
                    Err(_) => {
                        // Out of file descriptors, usually: wait a little.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await
                    {
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { rx, addr, task })
    }
}

/// TLS connections, for [`axum::serve()`]; the accepting task stops when
/// it is dropped.
pub struct TlsListener {
    rx: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.rx.recv().await {
            Some(c) => c,
            // The accepting task ended: never happens while the listener
            // lives (it loops for ever); wait for the shutdown.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
