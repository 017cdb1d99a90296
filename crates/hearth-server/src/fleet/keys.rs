//! Server keys in a fleet: a row per key (`keys`), the file as uploaded
//! in the blob store under a name of its own (`keys/TENANT/KEYID-RANDOM.key`),
//! so that two servers registering the same key at once, or one refused
//! after another's upload, never remove a file a row names.

use hearth::crypto::params::ParameterSet;
use hearth::KeyId;

use tokio_postgres::Row;

use super::db::{db_err, KEYS};
use super::sql;
use super::Fleet;
use crate::refusals;
use crate::server::lock;
use crate::store::StoredKey;
use crate::tenants::Tenant;
use crate::wire::{parse_key_id, ApiError};

/// What a key registration is checked against.
pub(crate) struct KeyLimits {
    /// The tenant's storage quota, bytes.
    pub(crate) quota: u64,
    /// Most keys in the fleet (this server's `--max-keys`).
    pub(crate) max_keys: usize,
    /// Free bytes the blob store's disk keeps.
    pub(crate) reserve: u64,
}

fn stored(tenant: &str, row: &tokio_postgres::Row) -> Result<StoredKey, ApiError> {
    let key_id: String = row.get("key_id");
    let params: String = row.get("params");
    Ok(StoredKey {
        tenant: tenant.to_string(),
        key_id: parse_key_id(&key_id).ok_or_else(|| db_err(format!("key id {key_id:?}")))?,
        params: ParameterSet::by_name(&params).map_err(db_err)?.id,
        compressed: row.get("compressed"),
        bytes: u64::try_from(row.get::<_, i64>("bytes")).unwrap_or(0),
    })
}

/// The blob a new upload of `tenant`'s key `id` is written to.
pub(super) fn blob_name(tenant: &str, id: KeyId) -> String {
    use rand::RngCore;
    let mut r = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut r);
    let r: String = r.iter().map(|b| format!("{b:02x}")).collect();
    let folder = if tenant.is_empty() { "_open" } else { tenant };
    format!("keys/{folder}/{id}-{r}.key")
}

/// Refuses a new key of `tenant`, which has `own` keys, in a fleet of
/// `all`, beyond its limit or the fleet's.
fn check_room(tenant: &Tenant, own: i64, all: i64, max_keys: usize) -> Result<(), ApiError> {
    if let Some(l) = tenant.limits {
        if own >= l.max_keys as i64 {
            return Err(refusals::key_limit(own as usize));
        }
    }
    if all >= max_keys as i64 {
        return Err(refusals::too_many_keys());
    }
    Ok(())
}

const COUNTS: &str =
    "SELECT (SELECT count(*) FROM keys WHERE tenant = $1), (SELECT count(*) FROM keys)";

impl Fleet {
    /// The row of `tenant`'s key `id`, if it is registered.
    async fn key_row(&self, tenant: &str, id: KeyId) -> Result<Option<Row>, ApiError> {
        let c = self.db.client().await?;
        sql::opt(
            &c,
            "SELECT key_id, params, compressed, bytes, blob FROM keys \
             WHERE tenant = $1 AND key_id = $2",
            &[&tenant, &id.to_string()],
        )
        .await
        .map_err(db_err)
    }

    /// `tenant`'s key `id`, if it is registered.
    pub(crate) async fn key(&self, tenant: &str, id: KeyId) -> Result<Option<StoredKey>, ApiError> {
        let row = self.key_row(tenant, id).await?;
        row.map(|r| stored(tenant, &r)).transpose()
    }

    /// How many keys `tenant` has registered.
    pub(crate) async fn key_count(&self, tenant: &str) -> Result<usize, ApiError> {
        let c = self.db.client().await?;
        let row = sql::one(&c, COUNTS, &[&tenant]).await.map_err(db_err)?;
        Ok(row.get::<_, i64>(0) as usize)
    }

    /// Refuses a new key of `bytes` bytes of `tenant` beyond its key
    /// limit or the fleet's, its storage quota or the disk's reserve: the
    /// cheap checks, before the upload is decoded (a compressed key is
    /// expanded), made again when it is registered.
    pub(crate) async fn check_key_room(
        &self,
        tenant: &Tenant,
        bytes: u64,
        limits: &KeyLimits,
    ) -> Result<(), ApiError> {
        let c = self.db.client().await?;
        let row = sql::one(
            &c,
            "SELECT (SELECT count(*) FROM keys WHERE tenant = $1), (SELECT count(*) FROM keys), \
             (SELECT stored_bytes FROM usage WHERE tenant = $1)",
            &[&tenant.name],
        )
        .await
        .map_err(db_err)?;
        check_room(tenant, row.get(0), row.get(1), limits.max_keys)?;
        let stored = u64::try_from(row.get::<_, Option<i64>>(2).unwrap_or(0)).unwrap_or(0);
        if stored.saturating_add(bytes) > limits.quota {
            return Err(refusals::storage_limit(bytes, stored, limits.quota));
        }
        refusals::check_disk(self.free_bytes(), bytes, limits.reserve)
    }

    /// Registers `key` (checked by the caller) of `tenant` with the file
    /// `bytes`: the file goes to the blob store first, then the row and
    /// the bytes against the tenant's storage in one transaction. A key
    /// registered already is answered as it is (`false`: not new). A
    /// registration whose commit was not answered leaves the file to the
    /// orphan sweep (the database may name it).
    pub(crate) async fn add_key(
        &self,
        tenant: &Tenant,
        key: StoredKey,
        bytes: std::sync::Arc<Vec<u8>>,
        limits: KeyLimits,
    ) -> Result<(StoredKey, bool), ApiError> {
        if let Some(k) = self.key(&tenant.name, key.key_id).await? {
            return Ok((k, false));
        }
        refusals::check_disk(self.free_bytes(), bytes.len() as u64, limits.reserve)?;
        let blob = blob_name(&tenant.name, key.key_id);
        self.put_blob(&blob, bytes).await?;
        match self.register(tenant, &key, &blob, &limits).await {
            Ok((k, true)) => {
                lock(&self.loaded).insert((tenant.name.clone(), key.key_id), blob);
                Ok((k, true))
            }
            Ok((k, false)) => {
                self.delete_blob(&blob).await;
                Ok((k, false))
            }
            Err((e, false)) => {
                self.delete_blob(&blob).await;
                Err(e)
            }
            Err((e, true)) => {
                tracing::warn!(
                    blob,
                    "a key's registration was not answered: its file is left"
                );
                Err(e)
            }
        }
    }

    /// The transaction of [`Fleet::add_key`]; an error says whether the
    /// database may have committed it all the same (its `COMMIT` was
    /// sent, the answer lost).
    async fn register(
        &self,
        tenant: &Tenant,
        key: &StoredKey,
        blob: &str,
        limits: &KeyLimits,
    ) -> Result<(StoredKey, bool), (ApiError, bool)> {
        let no = |e: ApiError| (e, false);
        let mut c = self.db.client().await.map_err(no)?;
        let tx = c.transaction().await.map_err(|e| no(db_err(e)))?;
        let used = self.lock_usage(&tx, &tenant.name).await.map_err(no)?;
        if let Some(row) = sql::opt(
            &tx,
            "SELECT key_id, params, compressed, bytes FROM keys WHERE tenant = $1 AND key_id = $2",
            &[&tenant.name, &key.key_id.to_string()],
        )
        .await
        .map_err(|e| no(db_err(e)))?
        {
            return Ok((stored(&tenant.name, &row).map_err(no)?, false));
        }
        let row = sql::one(&tx, COUNTS, &[&tenant.name])
            .await
            .map_err(|e| no(db_err(e)))?;
        check_room(tenant, row.get(0), row.get(1), limits.max_keys).map_err(no)?;
        if used.stored.saturating_add(key.bytes) > limits.quota {
            return Err(no(refusals::storage_limit(
                key.bytes,
                used.stored,
                limits.quota,
            )));
        }
        sql::exec(
            &tx,
            "INSERT INTO keys (tenant, key_id, params, compressed, bytes, blob) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &tenant.name,
                &key.key_id.to_string(),
                &key.params.params().name,
                &key.compressed,
                &(key.bytes as i64),
                &blob,
            ],
        )
        .await
        .map_err(|e| no(db_err(e)))?;
        sql::exec(
            &tx,
            "UPDATE usage SET stored_bytes = stored_bytes + $2 WHERE tenant = $1",
            &[&tenant.name, &(key.bytes as i64)],
        )
        .await
        .map_err(|e| no(db_err(e)))?;
        tx.commit().await.map_err(|e| (db_err(e), true))?;
        Ok((key.clone(), true))
    }

    /// Forgets `tenant`'s key `id` (its row, its bytes against the
    /// tenant's storage, its file) unless a job of the tenant under it is
    /// admitted, queued or running (`key_in_use`).
    pub(crate) async fn delete_key(&self, tenant: &str, id: KeyId) -> Result<StoredKey, ApiError> {
        let mut c = self.db.client().await?;
        let tx = c.transaction().await.map_err(db_err)?;
        self.lock_usage(&tx, tenant).await?;
        let key_id = id.to_string();
        let Some(row) = sql::opt(
            &tx,
            "SELECT key_id, params, compressed, bytes, blob FROM keys \
                 WHERE tenant = $1 AND key_id = $2",
            &[&tenant, &key_id],
        )
        .await
        .map_err(db_err)?
        else {
            return Err(refusals::unknown_key());
        };
        let key = stored(tenant, &row)?;
        let blob: String = row.get("blob");
        let busy: i64 = sql::one(
            &tx,
            "SELECT count(*) FROM jobs WHERE tenant = $1 AND key_id = $2 \
                 AND state IN ('admitting', 'queued', 'running')",
            &[&tenant, &key_id],
        )
        .await
        .map_err(db_err)?
        .get(0);
        if busy > 0 {
            return Err(refusals::key_in_use(busy as usize, id));
        }
        sql::exec(
            &tx,
            "DELETE FROM keys WHERE tenant = $1 AND key_id = $2",
            &[&tenant, &key_id],
        )
        .await
        .map_err(db_err)?;
        self.give(&tx, tenant, key.bytes).await?;
        // Every server drops it from its caches (delivered at commit).
        sql::exec(
            &tx,
            "SELECT pg_notify($1, $2)",
            &[&KEYS, &format!("{tenant}/{key_id}")],
        )
        .await
        .map_err(db_err)?;
        tx.commit().await.map_err(db_err)?;
        self.delete_blob(&blob).await;
        Ok(key)
    }

    /// The blob that `tenant`'s key `id` is registered with now.
    async fn key_blob(&self, tenant: &str, id: KeyId) -> Result<Option<String>, ApiError> {
        Ok(self.key_row(tenant, id).await?.map(|r| r.get("blob")))
    }

    /// The file of `tenant`'s key `id` as uploaded (from a worker thread);
    /// the blob it was read from is remembered ([`Fleet::key_current`]).
    pub(crate) fn key_bytes(&self, tenant: &str, id: KeyId) -> Result<Vec<u8>, ApiError> {
        let blob = self
            .block(self.key_blob(tenant, id))?
            .ok_or_else(|| unknown(id))?;
        let bytes = self.blobs.get(&blob).map_err(db_err)?;
        lock(&self.loaded).insert((tenant.to_string(), id), blob);
        Ok(bytes)
    }

    /// Whether a key this server loaded (and may have cached) is still
    /// registered with the file it was read from (from a worker thread,
    /// before a job runs with the cached key): `false` if it was deleted
    /// and registered again, an `unknown_key` error if it was deleted.
    pub(crate) fn key_current(&self, tenant: &str, id: KeyId) -> Result<bool, ApiError> {
        let now = self
            .block(self.key_blob(tenant, id))?
            .ok_or_else(|| unknown(id))?;
        let name = (tenant.to_string(), id);
        Ok(lock(&self.loaded).get(&name) == Some(&now))
    }

    /// Forgets which file `tenant`'s key `id` was loaded from (it left the
    /// caches).
    pub(crate) fn forget_loaded(&self, tenant: &str, id: KeyId) {
        lock(&self.loaded).remove(&(tenant.to_string(), id));
    }
}

fn unknown(id: KeyId) -> ApiError {
    ApiError::new(
        crate::wire::ErrorCode::UnknownKey,
        format!("no server key {id} is registered"),
    )
}
