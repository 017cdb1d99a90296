//! The fleet's database: a pool of connections (deadpool, tokio-postgres)
//! driven by a small runtime of its own, and the schema's versioned
//! migrations (`migrations/`, applied by refinery, one server at a time).

use std::future::Future;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

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
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Db")
    }
}

impl Db {
    /// Connects to `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`, or
    /// libpq's `key=value` form) with at most `size` connections, and
    /// brings the schema up to date. The error says why, without the
    /// password.
    pub(crate) fn connect(url: &str, size: usize) -> Result<Db, String> {
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
            NoTls,
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
            .map_err(|e| format!("cannot connect to the database: {e}"))?;
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
        self.pool.get().await.map_err(db_err)
    }

    /// Calls `wake` whenever a job is announced on [`QUEUED`], and once
    /// each time the listening connection is made (jobs may have been
    /// queued meanwhile). The connection is its own (`LISTEN` holds it),
    /// made again a second after it is lost; it lives as long as `self`.
    pub(crate) fn listen(&self, wake: impl Fn() + Send + Sync + 'static) {
        let config = self.config.clone();
        self.rt
            .as_ref()
            .expect("live until dropped")
            .spawn(async move {
                loop {
                    if let Err(e) = listen_once(&config, &wake).await {
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
    wake: &(impl Fn() + Send + Sync),
) -> Result<(), tokio_postgres::Error> {
    let (client, mut conn) = config.connect(NoTls).await?;
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
