//! The fleet's database: a pool of connections (deadpool, tokio-postgres)
//! driven by a small runtime of its own, and the schema's versioned
//! migrations (`migrations/`, applied by refinery, one server at a time).

use std::future::Future;

use std::path::Path;
use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::wire::{ApiError, ErrorCode};

/// The schema's migrations, in order: `V{n}__{name}.sql` beside the
/// crate's manifest. A new version is a new file; an applied one is never
/// edited (refinery refuses a database whose applied migration differs).
const MIGRATIONS: &[(&str, &str)] =
    &[("V1__fleet", include_str!("../../migrations/V1__fleet.sql"))];

/// Taken while migrating, so that servers starting together migrate once.
const MIGRATION_LOCK: i64 = 0x6865_6172_7468_0001;

/// A database error, as an internal error (its words go to the
/// operator's log, not to the client).
pub(crate) fn db_err(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Internal, format!("the database: {e}"))
}

/// `e` with the errors under it (a refused TLS handshake says why only
/// there: the certificate's issuer is unknown, the server offers no TLS).
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut under = e.source();
    while let Some(s) = under {
        let words = s.to_string();
        if !out.contains(&words) {
            out += &format!(": {words}");
        }
        under = s.source();
    }
    out
}

/// The channel a job queued anywhere in the fleet is announced on
/// (`NOTIFY`), so that idle servers claim it at once instead of at their
/// next look.
pub(crate) const QUEUED: &str = "hearth_queued";

/// A pool of connections to the fleet's database.
pub(crate) struct Db {
    /// Drives the connections made from threads outside any runtime, and
    /// the listener; `None` only while dropped.
    rt: Option<tokio::runtime::Runtime>,
    pool: Pool,
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
}

/// How connections to the database are encrypted: TLS where the server
/// offers it (the URL's `sslmode`: `prefer` by default, `require`,
/// `disable`), its certificate checked against `ca` (a PEM file: that CA
/// alone) or else the system's roots. A database with TLS whose
/// certificate cannot be checked is refused, never used unchecked.
fn tls(ca: Option<&Path>) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = match ca {
        Some(path) => {
            let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
                roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            }
            if roots.is_empty() {
                return Err(bad(&"no certificate in it"));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => {
            let verifier = rustls_platform_verifier::Verifier::new(provider)
                .map_err(|e| format!("the system's roots: {e}"))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Db")
    }
}

impl Db {
    /// Connects to `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`, or
    /// libpq's `key=value` form; TLS as [`tls`] says, `ca` the CA file)
    /// with at most `size` connections, and brings the schema up to date.
    /// The error says why, without the password.
    pub(crate) fn connect(url: &str, ca: Option<&Path>, size: usize) -> Result<Db, String> {
        let tls = tls(ca)?;
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| format!("the database URL cannot be read: {e}"))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hearth-db")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size.max(2))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(std::time::Duration::from_secs(30)))
            .create_timeout(Some(std::time::Duration::from_secs(10)))
            .build()
            .map_err(|e| e.to_string())?;
        let db = Db {
            rt: Some(rt),
            pool,
            config,
            tls,
        };
        db.block(db.migrate())?;
        Ok(db)
    }

    /// Applies the migrations the database lacks, under an advisory lock.
    async fn migrate(&self) -> Result<(), String> {
        let mut c = self
            .pool
            .get()
            .await
            .map_err(|e| format!("cannot connect to the database: {}", chain(&e)))?;
        c.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(|e| e.to_string())?;
        let migrations = MIGRATIONS
            .iter()
            .map(|(name, sql)| refinery_core::Migration::unapplied(name, sql))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string());
        let applied = match migrations {
            Ok(m) => refinery_core::Runner::new(&m)
                .set_migration_table_name("hearth_schema_history")
                .run_async(&mut **c)
                .await
                .map(|_| ())
                .map_err(|e| format!("migrating the database: {e}")),
            Err(e) => Err(e),
        };
        let unlocked = c
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
            .await;
        applied?;
        unlocked.map(|_| ()).map_err(|e| e.to_string())
    }

    /// A connection from the pool.
    pub(crate) async fn client(&self) -> Result<Object, ApiError> {
        self.pool.get().await.map_err(|e| db_err(chain(&e)))
    }

    /// Calls `wake` whenever a job is announced on [`QUEUED`], and once
    /// each time the listening connection is made (jobs may have been
    /// queued meanwhile). The connection is its own (`LISTEN` holds it),
    /// made again a second after it is lost; it lives as long as `self`.
    pub(crate) fn listen(&self, wake: impl Fn() + Send + Sync + 'static) {
        let (config, tls) = (self.config.clone(), self.tls.clone());
        self.rt
            .as_ref()
            .expect("live until dropped")
            .spawn(async move {
                loop {
                    if let Err(e) = listen_once(&config, tls.clone(), &wake).await {
                        tracing::warn!(error = %e, "the fleet's listener: connecting again in 1 s");
                    }
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            });
    }

    /// Runs `f` to its end from a thread outside any runtime (the job
    /// workers, the fleet's sweeper, the commands).
    pub(crate) fn block<F: Future>(&self, f: F) -> F::Output {
        self.rt.as_ref().expect("live until dropped").block_on(f)
    }
}

impl Drop for Db {
    /// The runtime goes without waiting: the last reference to the fleet
    /// may be dropped on an async thread, where a blocking shutdown
    /// panics.
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The database's clock, Unix seconds (the fleet's one clock for leases,
/// result times and the day).
pub(crate) const NOW_S: &str = "extract(epoch from now())::bigint";

/// One listening connection, until it is lost: `LISTEN` sent through it
/// while its messages are read, `wake` called once it listens and at
/// every announcement.
async fn listen_once(
    config: &tokio_postgres::Config,
    tls: MakeRustlsConnect,
    wake: &(impl Fn() + Send + Sync),
) -> Result<(), tokio_postgres::Error> {
    let (client, mut conn) = config.connect(tls).await?;
    let sql = format!("LISTEN {QUEUED}");
    let mut listen = std::pin::pin!(client.batch_execute(&sql));
    let mut listening = false;
    loop {
        let message = std::future::poll_fn(|cx| {
            if !listening {
                if let std::task::Poll::Ready(r) = listen.as_mut().poll(cx) {
                    listening = true;
                    if r.is_ok() {
                        wake();
                    }
                }
            }
            conn.poll_message(cx)
        })
        .await;
        match message {
            Some(Ok(tokio_postgres::AsyncMessage::Notification(_))) => wake(),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => return Ok(()),
        }
    }
}
