//! The fleet's database: a pool of connections (deadpool, tokio-postgres)
//! driven by a small runtime of its own, and the schema's versioned
//! migrations (`migrations/`, applied by refinery, one server at a time).

use std::future::Future;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::Database;
use crate::wire::{ApiError, ErrorCode};

/// Longest a statement may run (`statement_timeout`, on every connection
/// but the migrations'): a statement stuck behind a lock or a slow disk
/// fails instead of holding its connection and its caller for ever.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest a connection may sit in an open transaction without a
/// statement (`idle_in_transaction_session_timeout`): the database ends
/// the session of a server paused mid-transaction, so that the rows it
/// locked (a tenant's `usage`, a job) are not held for the whole pause.
const IDLE_IN_TRANSACTION: Duration = Duration::from_secs(60);

/// TCP keepalive on every connection: probes after this long idle, then
/// every [`KEEPALIVE_INTERVAL`], and the connection is given up after
/// [`KEEPALIVE_RETRIES`] unanswered (about 30 s for a database that
/// vanished without closing its connections). Unacknowledged writes give
/// up after [`USER_TIMEOUT`].
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;
const USER_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest a new connection may take (TCP, TLS and authentication).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The schema's migrations, in order: `V{n}__{name}.sql` beside the
/// crate's manifest. A new version is a new file; an applied one is never
/// edited (refinery refuses a database whose applied migration differs).
const MIGRATIONS: &[(&str, &str)] = &[
    ("V1__fleet", include_str!("../../migrations/V1__fleet.sql")),
    (
        "V2__liveness",
        include_str!("../../migrations/V2__liveness.sql"),
    ),
    (
        "V3__unpacked",
        include_str!("../../migrations/V3__unpacked.sql"),
    ),
];

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

/// How connections to the database are encrypted: with a CA file `ca`,
/// always TLS, its certificate checked against that CA alone (see
/// [`settings`]); without, TLS where the server offers it (the URL's
/// `sslmode`: `prefer` by default, `require`, `disable`), its certificate
/// checked against the system's roots. A database with TLS whose
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
    /// Connects to `db` ([`settings`]) with at most `size` connections,
    /// and brings the schema up to date. The error says why, without the
    /// password.
    pub(crate) fn connect(db: &Database, size: usize) -> Result<Db, String> {
        let (config, tls) = settings(db)?;
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
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(CONNECT_TIMEOUT))
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
        // A migration may take longer than a statement may: no timeout
        // here (`RESET` gives the connection its own back after).
        c.batch_execute("SET statement_timeout = 0")
            .await
            .map_err(|e| e.to_string())?;
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
        let reset = c.batch_execute("RESET statement_timeout").await;
        applied?;
        unlocked.map_err(|e| e.to_string())?;
        reset.map_err(|e| e.to_string())
    }

    /// A connection from the pool.
    pub(crate) async fn client(&self) -> Result<Object, ApiError> {
        self.pool.get().await.map_err(|e| db_err(chain(&e)))
    }

    /// Calls `on` at every announcement on the fleet's channels
    /// ([`QUEUED`], [`TENANTS`], [`KEYS`]), and with [`Notice::Listening`]
    /// each time the listening connection is made (announcements may have
    /// been missed meanwhile). The connection is its own (`LISTEN` holds
    /// it), made again a second after it is lost; it lives as long as
    /// `self`.
    pub(crate) fn listen(&self, on: impl Fn(Notice<'_>) + Send + Sync + 'static) {
        let (config, tls) = (self.config.clone(), self.tls.clone());
        self.spawn(async move {
            loop {
                if let Err(e) = listen_once(&config, tls.clone(), &on).await {
                    tracing::warn!(error = %e, "the fleet's listener: connecting again in 1 s");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    /// Runs `f` on the database's runtime for as long as `self` lives.
    pub(crate) fn spawn(&self, f: impl Future<Output = ()> + Send + 'static) {
        self.rt.as_ref().expect("live until dropped").spawn(f);
    }

    /// Makes connections of their own, outside the pool.
    pub(crate) fn connector(&self) -> Connector {
        Connector {
            config: self.config.clone(),
            tls: self.tls.clone(),
        }
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

/// Makes connections outside the pool (the heartbeats': they never wait
/// for the pool, which requests may exhaust).
pub(crate) struct Connector {
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
}

impl Connector {
    /// A new connection, driven by a task of the runtime it is made on.
    pub(crate) async fn connect(&self) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (client, conn) = self.config.connect(self.tls.clone()).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(client)
    }
}

/// An announcement on one of the fleet's channels.
pub(crate) enum Notice<'a> {
    /// The listener (re)connected: anything may have been missed.
    Listening,
    /// A job was queued ([`QUEUED`]).
    Queued,
    /// The tenants or their tokens changed ([`TENANTS`]).
    Tenants,
    /// A key was deleted ([`KEYS`]): `TENANT/KEYID`.
    KeyDeleted(&'a str),
}

/// The channel a change of the tenants or tokens is announced on, so that
/// servers read them again at once.
pub(crate) const TENANTS: &str = "hearth_tenants";

/// The channel a deleted key is announced on (`TENANT/KEYID`), so that
/// every server drops it from its caches.
pub(crate) const KEYS: &str = "hearth_keys";

/// One listening connection, until it is lost: `LISTEN` sent through it
/// while its messages are read, `on` called once it listens and at every
/// announcement.
async fn listen_once(
    config: &tokio_postgres::Config,
    tls: MakeRustlsConnect,
    on: &(impl Fn(Notice<'_>) + Send + Sync),
) -> Result<(), tokio_postgres::Error> {
    let (client, mut conn) = config.connect(tls).await?;
    let sql = format!("LISTEN {QUEUED}; LISTEN {TENANTS}; LISTEN {KEYS}");
    let mut listen = std::pin::pin!(client.batch_execute(&sql));
    let mut listening = false;
    loop {
        let message = std::future::poll_fn(|cx| {
            if !listening {
                if let std::task::Poll::Ready(r) = listen.as_mut().poll(cx) {
                    listening = true;
                    if r.is_ok() {
                        on(Notice::Listening);
                    }
                }
            }
            conn.poll_message(cx)
        })
        .await;
        match message {
            Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => on(match n.channel() {
                TENANTS => Notice::Tenants,
                KEYS => Notice::KeyDeleted(n.payload()),
                _ => Notice::Queued,
            }),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => return Ok(()),
        }
    }
}

/// How `db` is reached: its URL read, its password (given apart, or in
/// the URL: not both), TLS (with a CA file, `sslmode=require` and the
/// certificate checked against that CA; a URL saying `sslmode=disable` is
/// refused with one), and on every connection [`STATEMENT_TIMEOUT`],
/// [`IDLE_IN_TRANSACTION`], TCP keepalive and a connect timeout (the
/// URL's own `options`, `connect_timeout` and `application_name` win).
pub(crate) fn settings(
    db: &Database,
) -> Result<(tokio_postgres::Config, MakeRustlsConnect), String> {
    let mut config: tokio_postgres::Config = db
        .url
        .parse()
        .map_err(|e| format!("the database URL cannot be read: {e}"))?;
    if let Some(p) = &db.password {
        if config.get_password().is_some() {
            return Err(
                "the database's password is given twice: in the URL and apart \
                 (HEARTH_STORE_PASSWORD or --store-password-file); give it once"
                    .into(),
            );
        }
        config.password(p.as_bytes());
    }
    if db.ca_cert.is_some() {
        if config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable {
            return Err(
                "--store-ca-cert asks for verified TLS, and the database URL says \
                 sslmode=disable: drop one of them"
                    .into(),
            );
        }
        config.ssl_mode(tokio_postgres::config::SslMode::Require);
    }
    let ours = format!(
        "-c statement_timeout={} -c idle_in_transaction_session_timeout={}",
        STATEMENT_TIMEOUT.as_millis(),
        IDLE_IN_TRANSACTION.as_millis()
    );
    let options = match config.get_options() {
        Some(theirs) if !theirs.trim().is_empty() => format!("{ours} {theirs}"),
        _ => ours,
    };
    config.options(options);
    if config.get_application_name().is_none() {
        config.application_name("hearth-server");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config
        .keepalives(true)
        .keepalives_idle(KEEPALIVE_IDLE)
        .keepalives_interval(KEEPALIVE_INTERVAL)
        .keepalives_retries(KEEPALIVE_RETRIES)
        .tcp_user_timeout(USER_TIMEOUT);
    Ok((config, tls(db.ca_cert.as_deref())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_postgres::config::SslMode;

    #[test]
    fn every_connection_has_timeouts_keepalive_and_tls_as_asked() {
        let (c, _) = settings(&Database::new(
            "postgres://hearth@db.example/fleet?options=-c%20work_mem%3D8MB",
        ))
        .unwrap();
        let options = c.get_options().unwrap();
        assert!(
            options.starts_with("-c statement_timeout=30000 "),
            "{options}"
        );
        assert!(options.contains("idle_in_transaction_session_timeout=60000"));
        assert!(
            options.ends_with("-c work_mem=8MB"),
            "the URL's own come last"
        );
        assert!(c.get_keepalives());
        assert_eq!(c.get_keepalives_idle(), KEEPALIVE_IDLE);
        assert_eq!(c.get_tcp_user_timeout(), Some(&USER_TIMEOUT));
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(c.get_application_name(), Some("hearth-server"));
        assert_eq!(c.get_ssl_mode(), SslMode::Prefer);

        // The password apart, once.
        let apart = Database {
            password: Some("pw".into()),
            ..Database::new("postgres://hearth@db.example/fleet")
        };
        assert_eq!(settings(&apart).unwrap().0.get_password(), Some(&b"pw"[..]));
        let twice = Database {
            url: "postgres://hearth:other@db.example/fleet".into(),
            ..apart
        };
        let e = settings(&twice).err().unwrap();
        assert!(
            e.contains("twice") && !e.contains("pw") && !e.contains("other"),
            "{e}"
        );

        // A CA file: TLS required, whatever the URL says but `disable`,
        // which is refused.
        let dir = std::env::temp_dir().join(format!("hearth-db-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = dir.join("ca.pem");
        let cert = rcgen::generate_simple_self_signed(vec!["db.example".into()]).unwrap();
        std::fs::write(&ca, cert.cert.pem()).unwrap();
        for url in [
            "postgres://h@db.example/f",
            "postgres://h@db.example/f?sslmode=prefer",
        ] {
            let db = Database {
                ca_cert: Some(ca.clone()),
                ..Database::new(url)
            };
            assert_eq!(settings(&db).unwrap().0.get_ssl_mode(), SslMode::Require);
        }
        let db = Database {
            ca_cert: Some(ca.clone()),
            ..Database::new("postgres://h@db.example/f?sslmode=disable")
        };
        assert!(settings(&db).err().unwrap().contains("sslmode=disable"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
