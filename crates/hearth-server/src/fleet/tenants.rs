//! Tenants and their tokens in the fleet's database: the same
//! [`Tenants`] a data folder keeps in `tenants.json`, as rows of
//! `tenants` and `tokens`, with the fleet's `tenants_version` (one more
//! at every edit: servers read them again when it changes, so a new
//! token works and a revoked one is refused from the next request on)
//! and `tenants_required` (the fleet has had tenants: it stays closed to
//! anyone without a token, as a folder with `tenants.required`). Every
//! edit is announced (`NOTIFY hearth_tenants`): servers read the tenants
//! again at once.
//!
//! A server checks a request's token against the tenants as it last read
//! them before it asks the database anything: a token they do not know
//! (or none) is refused without a query while they are younger than
//! `TOKEN_CACHE` (2 s) and no edit was announced since. A token they know
//! costs one small query (is the tenants' version still the one read?),
//! so that a revoked token is refused from the next request on.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::GenericClient;

use super::db::{Db, TENANTS};
use super::sql;
use super::{Database, Fleet};
use crate::server::lock;
use crate::tenants::{TenantError, TenantLimits, Tenants, TokenRecord};

/// How long the tenants as last read are trusted to refuse a token they
/// do not know, without a query. A token made meanwhile is announced at
/// once; if that announcement is lost, it works within this.
pub(crate) const TOKEN_CACHE: Duration = Duration::from_secs(2);

/// The tenants as a server last read them.
pub(crate) struct Seen {
    version: i64,
    tenants: Arc<Tenants>,
    /// When the database last said `version` is current.
    at: Instant,
}

/// What the database says of the tenants.
struct Read {
    tenants: Tenants,
    version: i64,
    required: bool,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

async fn version(c: &impl GenericClient) -> Result<(i64, bool), tokio_postgres::Error> {
    let row = sql::one(
        c,
        "SELECT tenants_version, tenants_required FROM fleet",
        &[],
    )
    .await?;
    Ok((row.get(0), row.get(1)))
}

async fn read(c: &impl GenericClient, lock_row: bool) -> Result<Read, tokio_postgres::Error> {
    let (version, required) = if lock_row {
        let row = sql::one(
            c,
            "SELECT tenants_version, tenants_required FROM fleet FOR UPDATE",
            &[],
        )
        .await?;
        (row.get(0), row.get(1))
    } else {
        self::version(c).await?
    };
    let mut t = Tenants::default();
    for row in sql::rows(
        c,
        "SELECT name, max_keys, max_queue, max_pbs_per_day, max_storage FROM tenants",
        &[],
    )
    .await?
    {
        let name: String = row.get(0);
        let limits = TenantLimits {
            max_keys: to_u64(row.get(1)) as usize,
            max_queue: to_u64(row.get(2)) as usize,
            max_pbs_per_day: to_u64(row.get(3)),
        };
        if let Some(bytes) = row.get::<_, Option<i64>>(4) {
            t.storage.insert(name.clone(), to_u64(bytes));
        }
        t.tenants.insert(name, limits);
    }
    for row in sql::rows(
        c,
        "SELECT id, tenant, hash, created, revoked FROM tokens ORDER BY created, id",
        &[],
    )
    .await?
    {
        t.tokens.push(TokenRecord {
            id: row.get(0),
            tenant: row.get(1),
            hash: row.get(2),
            created: to_u64(row.get(3)),
            revoked: row.get::<_, Option<i64>>(4).map(to_u64),
        });
    }
    Ok(Read {
        tenants: t,
        version,
        required,
    })
}

/// Replaces every tenant and token by `t`'s, and marks the fleet as one
/// that has had tenants if `t` has any.
async fn write(c: &impl GenericClient, t: &Tenants) -> Result<(), tokio_postgres::Error> {
    sql::exec(c, "DELETE FROM tokens", &[]).await?;
    sql::exec(c, "DELETE FROM tenants", &[]).await?;
    for (name, l) in &t.tenants {
        let storage = t.max_storage(name).map(to_i64);
        sql::exec(
            c,
            "INSERT INTO tenants (name, max_keys, max_queue, max_pbs_per_day, max_storage) \
             VALUES ($1, $2, $3, $4, $5)",
            &[
                name,
                &to_i64(l.max_keys as u64),
                &to_i64(l.max_queue as u64),
                &to_i64(l.max_pbs_per_day),
                &storage,
            ],
        )
        .await?;
    }
    for k in &t.tokens {
        sql::exec(
            c,
            "INSERT INTO tokens (id, tenant, hash, created, revoked) VALUES ($1, $2, $3, $4, $5)",
            &[
                &k.id,
                &k.tenant,
                &k.hash,
                &to_i64(k.created),
                &k.revoked.map(to_i64),
            ],
        )
        .await?;
    }
    sql::exec(
        c,
        "UPDATE fleet SET tenants_version = tenants_version + 1, \
         tenants_required = tenants_required OR $1",
        &[&!t.is_open()],
    )
    .await?;
    // Delivered when the transaction commits.
    sql::exec(c, &format!("NOTIFY {TENANTS}"), &[]).await?;
    Ok(())
}

fn database(e: impl std::fmt::Display) -> TenantError {
    TenantError::Database(e.to_string())
}

/// The tenants as they are, or why the fleet is closed: a fleet that has
/// had tenants and holds none now.
fn checked(r: Read) -> Result<Tenants, TenantError> {
    r.tenants.check().map_err(database)?;
    if r.required && r.tenants.is_open() {
        return Err(TenantError::Closed("holds no tenant".into()));
    }
    Ok(r.tenants)
}

/// The tenants of the fleet at `db` (`hearth server token list --store`).
pub fn load(db: &Database) -> Result<Tenants, TenantError> {
    let db = Db::connect(db, 2).map_err(database)?;
    db.block(async {
        let c = db.client().await.map_err(|e| database(e.message))?;
        checked(read(&c, false).await.map_err(database)?)
    })
}

/// Changes the fleet's tenants in one transaction (one editor at a time:
/// the fleet's row is locked): reads them, calls `f`, and writes them
/// back if `f` succeeds (`hearth server token add | revoke --store`).
/// Running servers see the change at their next request.
pub fn edit<T>(
    db: &Database,
    f: impl FnOnce(&mut Tenants) -> Result<T, TenantError>,
) -> Result<T, TenantError> {
    let db = Db::connect(db, 2).map_err(database)?;
    db.block(async {
        let mut c = db.client().await.map_err(|e| database(e.message))?;
        let tx = c.transaction().await.map_err(database)?;
        let mut t = read(&tx, true).await.map_err(database)?.tenants;
        let out = f(&mut t)?;
        t.check().map_err(database)?;
        write(&tx, &t).await.map_err(database)?;
        tx.commit().await.map_err(database)?;
        Ok(out)
    })
}

/// Opens the fleet on purpose (`hearth server reopen --store`): removes
/// every tenant and token and the fleet's mark of having had tenants, in
/// one transaction; returns the names of the tenants removed.
pub fn reopen(db: &Database) -> Result<Vec<String>, TenantError> {
    let db = Db::connect(db, 2).map_err(database)?;
    db.block(async {
        let mut c = db.client().await.map_err(|e| database(e.message))?;
        let tx = c.transaction().await.map_err(database)?;
        let was = read(&tx, true).await.map_err(database)?.tenants;
        write(&tx, &Tenants::default()).await.map_err(database)?;
        sql::exec(&tx, "UPDATE fleet SET tenants_required = FALSE", &[])
            .await
            .map_err(database)?;
        tx.commit().await.map_err(database)?;
        Ok(was.tenants.into_keys().collect())
    })
}

/// Writes `t` into a fleet that has no tenants yet (the migration of a
/// data folder), marking it as having had tenants if `required`.
pub(super) async fn import(
    c: &impl GenericClient,
    t: &Tenants,
    required: bool,
) -> Result<(), TenantError> {
    let was = read(c, true).await.map_err(database)?;
    if !was.tenants.is_open() {
        return Err(TenantError::Database(
            "the fleet has tenants already: a folder is migrated into a fleet without any".into(),
        ));
    }
    write(c, t).await.map_err(database)?;
    if required {
        sql::exec(c, "UPDATE fleet SET tenants_required = TRUE", &[])
            .await
            .map_err(database)?;
    }
    Ok(())
}

impl Fleet {
    /// The tenants now: read again when their version changed since the
    /// last request (one small query a request). Every failure is a
    /// reason to close the server, never to open it.
    pub(crate) async fn tenants(&self) -> Result<Arc<Tenants>, String> {
        // Cleared before the query: an edit announced during it marks
        // the tenants stale again.
        self.tenants_stale.store(false, Ordering::Relaxed);
        let c = self.db.client().await.map_err(|e| e.message)?;
        let (v, required) = version(&c)
            .await
            .map_err(|e| format!("the database: {e}"))?;
        let cached = {
            let mut seen = lock(&self.tenants);
            seen.as_mut().filter(|s| s.version == v).map(|s| {
                s.at = Instant::now();
                s.tenants.clone()
            })
        };
        let t = match cached {
            Some(t) => t,
            None => {
                let r = read(&c, false)
                    .await
                    .map_err(|e| format!("the database: {e}"))?;
                let version = r.version;
                let t = Arc::new(checked(r).map_err(|e| e.to_string())?);
                *lock(&self.tenants) = Some(Seen {
                    version,
                    tenants: t.clone(),
                    at: Instant::now(),
                });
                t
            }
        };
        if required && t.is_open() {
            return Err("the fleet has had tenants and holds none".into());
        }
        Ok(t)
    }

    /// The tenants as last read, if they refuse `token` (a request's
    /// bearer token, if any) without asking the database: they have
    /// tenants, do not know the token, are younger than [`TOKEN_CACHE`]
    /// and no edit was announced since. `None`: ask [`Fleet::tenants`].
    pub(crate) fn refuses(&self, token: Option<&str>) -> Option<Arc<Tenants>> {
        if self.tenants_stale.load(Ordering::Relaxed) {
            return None;
        }
        let seen = lock(&self.tenants);
        let s = seen.as_ref()?;
        let refused = s.at.elapsed() < TOKEN_CACHE
            && !s.tenants.is_open()
            && token.and_then(|t| s.tenants.authenticate(t)).is_none();
        refused.then(|| s.tenants.clone())
    }

    /// The tenants as last read (for the few callers that cannot wait on
    /// the database: whether the server is open, at start).
    pub(crate) fn tenants_seen(&self) -> Option<Arc<Tenants>> {
        lock(&self.tenants).as_ref().map(|s| s.tenants.clone())
    }
}
