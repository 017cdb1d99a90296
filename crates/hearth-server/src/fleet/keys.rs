//! Server keys in a fleet: a row per key (`keys`), the file as uploaded
//! in the blob store under a name of its own (`keys/TENANT/KEYID-RANDOM.key`),
//! so that two servers registering the same key at once, or one refused
//! after another's upload, never remove a file a row names.

use hearth::crypto::params::ParameterSet;
use hearth::KeyId;

use super::db::db_err;
use super::sql;
use super::Fleet;
use crate::refusals;
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
    /// `tenant`'s key `id`, if it is registered.
    pub(crate) async fn key(&self, tenant: &str, id: KeyId) -> Result<Option<StoredKey>, ApiError> {
        let c = self.db.client().await?;
        let row = sql::opt(
            &c,
            "SELECT key_id, params, compressed, bytes FROM keys WHERE tenant = $1 AND key_id = $2",
            &[&tenant, &id.to_string()],
        )
        .await
        .map_err(db_err)?;
        row.map(|r| stored(tenant, &r)).transpose()
    }

    /// How many keys `tenant` has registered.
    pub(crate) async fn key_count(&self, tenant: &str) -> Result<usize, ApiError> {
        let c = self.db.client().await?;
        let row = sql::one(&c, COUNTS, &[&tenant]).await.map_err(db_err)?;
        Ok(row.get::<_, i64>(0) as usize)
    }

    /// Refuses a new key of `tenant` beyond its limit or the fleet's
    /// (checked before the upload is decoded, and again when it is
    /// registered).
    pub(crate) async fn check_key_room(
        &self,
        tenant: &Tenant,
        max_keys: usize,
    ) -> Result<(), ApiError> {
        let c = self.db.client().await?;
        let row = sql::one(&c, COUNTS, &[&tenant.name])
            .await
            .map_err(db_err)?;
        check_room(tenant, row.get(0), row.get(1), max_keys)
    }

    /// Registers `key` (checked by the caller) of `tenant` with the file
    /// `bytes`: the file goes to the blob store first, then the row and
    /// the bytes against the tenant's storage in one transaction. A key
    /// registered already is answered as it is (`false`: not new).
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
        let registered = self.register(tenant, &key, &blob, &limits).await;
        if !matches!(registered, Ok((_, true))) {
            self.delete_blob(&blob).await;
        }
        registered
    }

    async fn register(
        &self,
        tenant: &Tenant,
        key: &StoredKey,
        blob: &str,
        limits: &KeyLimits,
    ) -> Result<(StoredKey, bool), ApiError> {
        let mut c = self.db.client().await?;
        let tx = c.transaction().await.map_err(db_err)?;
        let used = self.lock_usage(&tx, &tenant.name).await?;
        if let Some(row) = sql::opt(
            &tx,
            "SELECT key_id, params, compressed, bytes FROM keys WHERE tenant = $1 AND key_id = $2",
            &[&tenant.name, &key.key_id.to_string()],
        )
        .await
        .map_err(db_err)?
        {
            return Ok((stored(&tenant.name, &row)?, false));
        }
        let row = sql::one(&tx, COUNTS, &[&tenant.name])
            .await
            .map_err(db_err)?;
        check_room(tenant, row.get(0), row.get(1), limits.max_keys)?;
        if used.stored.saturating_add(key.bytes) > limits.quota {
            return Err(refusals::storage_limit(
                key.bytes,
                used.stored,
                limits.quota,
            ));
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
        .map_err(db_err)?;
        sql::exec(
            &tx,
            "UPDATE usage SET stored_bytes = stored_bytes + $2 WHERE tenant = $1",
            &[&tenant.name, &(key.bytes as i64)],
        )
        .await
        .map_err(db_err)?;
        tx.commit().await.map_err(db_err)?;
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
        tx.commit().await.map_err(db_err)?;
        self.delete_blob(&blob).await;
        Ok(key)
    }

    /// The file of `tenant`'s key `id` as uploaded (from a worker thread).
    pub(crate) fn key_bytes(&self, tenant: &str, id: KeyId) -> Result<Vec<u8>, ApiError> {
        let blob: Option<String> = self.block(async {
            let c = self.db.client().await?;
            let row = sql::opt(
                &c,
                "SELECT blob FROM keys WHERE tenant = $1 AND key_id = $2",
                &[&tenant, &id.to_string()],
            )
            .await
            .map_err(db_err)?;
            Ok::<_, ApiError>(row.map(|r| r.get(0)))
        })?;
        let blob = blob.ok_or_else(|| {
            ApiError::new(
                crate::wire::ErrorCode::UnknownKey,
                format!("no server key {id} is registered"),
            )
        })?;
        self.blobs.get(&blob).map_err(db_err)
    }
}
