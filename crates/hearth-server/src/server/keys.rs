//! Server keys: registered by tenants (in the data folder, or in the
//! fleet's database and blob store), kept decompressed in a
//! least-recently-used cache counted in bytes.

use std::collections::HashMap;
use std::sync::Arc;

use hearth::crypto::files::{write_atomic, FileInfo, FileKind};
use hearth::{KeyId, ServerKey};

use super::caches::KeyName;
use super::lock::lock;
use super::routes::heavy;
use super::state::{internal, DataFolder, Ledger, Shared};
use crate::fleet::KeyLimits;
use crate::refusals;
use crate::request::key_error;
use crate::store::StoredKey;
use crate::tenants::Tenant;
use crate::wire::{ApiError, ErrorCode};

impl Shared {
    /// The key `id` of `tenant`, from the cache or loaded (and
    /// decompressed) from the data folder or the fleet's blob store.
    pub(super) fn server_key(&self, tenant: &str, id: KeyId) -> Result<Arc<ServerKey>, ApiError> {
        let name = (tenant.to_string(), id);
        // In a fleet, a cached key is used only while it is registered with
        // the file it was read from (another server may have deleted it).
        if let Ledger::Fleet(fleet) = &self.ledger {
            if !fleet.key_current(tenant, id)? {
                self.forget(tenant, id);
            }
        }
        if let Some(k) = lock(&self.cache).get(&name) {
            self.metrics.key_cache.with_label_values(&["hit"]).inc();
            return Ok(k);
        }
        self.metrics.key_cache.with_label_values(&["miss"]).inc();
        let file = self.key_file(tenant, id)?;
        let key = ServerKey::from_bytes(std::path::Path::new("server key"), &file);
        let key = Arc::new(key.map_err(key_error)?);
        self.keep_key(name, key.clone());
        Ok(key)
    }

    /// The file of `tenant`'s key `id` as uploaded (compressed if it was).
    pub(super) fn key_file(&self, tenant: &str, id: KeyId) -> Result<Vec<u8>, ApiError> {
        match &self.ledger {
            Ledger::Folder(f) => {
                if !lock(&f.keys).contains_key(&(tenant.to_string(), id)) {
                    return Err(ApiError::new(
                        ErrorCode::UnknownKey,
                        format!("no server key {id} is registered"),
                    ));
                }
                std::fs::read(f.store.key_path(tenant, id)).map_err(internal)
            }
            Ledger::Fleet(fleet) => fleet.key_bytes(tenant, id),
        }
    }

    /// `tenant`'s key `id`, if it is registered.
    pub(super) async fn key(&self, tenant: &str, id: KeyId) -> Result<Option<StoredKey>, ApiError> {
        match &self.ledger {
            Ledger::Folder(f) => Ok(lock(&f.keys).get(&(tenant.to_string(), id)).cloned()),
            Ledger::Fleet(fleet) => fleet.key(tenant, id).await,
        }
    }

    /// How many keys `tenant` has registered.
    pub(super) async fn key_count(&self, tenant: &str) -> Result<usize, ApiError> {
        match &self.ledger {
            Ledger::Folder(f) => Ok(lock(&f.keys).keys().filter(|(n, _)| *n == tenant).count()),
            Ledger::Fleet(fleet) => fleet.key_count(tenant).await,
        }
    }

    /// Refuses a new key of `tenant` beyond its `max_keys` or the
    /// server's: checked before the upload is decoded, and again when it
    /// is registered.
    fn check_key_room(
        &self,
        keys: &HashMap<KeyName, StoredKey>,
        tenant: &Tenant,
    ) -> Result<(), ApiError> {
        if let Some(l) = tenant.limits {
            let own = keys.keys().filter(|(t, _)| *t == tenant.name).count();
            if own >= l.max_keys {
                return Err(refusals::key_limit(own));
            }
        }
        if keys.len() >= self.config.max_keys {
            return Err(refusals::too_many_keys());
        }
        Ok(())
    }

    /// Checks (by decoding it: a compressed key is expanded), stores and
    /// registers a key `tenant` uploaded; `true` if it is new. Its room
    /// and its bytes are taken first, so a refused upload costs no
    /// decoding and no disk.
    pub(super) async fn register_key(
        self: &Arc<Self>,
        tenant: Tenant,
        info: FileInfo,
        bytes: Vec<u8>,
    ) -> Result<(StoredKey, bool), ApiError> {
        let Ledger::Fleet(fleet) = &self.ledger else {
            let owner = tenant.name.clone();
            return heavy(self, &owner, move |s| {
                let Ledger::Folder(f) = &s.ledger else {
                    unreachable!("a server's ledger does not change")
                };
                s.register_in_folder(f, &tenant, info, &bytes)
            })
            .await;
        };
        let limits = KeyLimits {
            quota: self.quota(&tenant.name),
            max_keys: self.config.max_keys,
            reserve: self.config.disk_reserve,
        };
        fleet
            .check_key_room(&tenant, bytes.len() as u64, &limits)
            .await?;
        let bytes = Arc::new(bytes);
        let file = bytes.clone();
        let key = heavy(self, &tenant.name, move |_| {
            ServerKey::from_bytes(std::path::Path::new("server key"), &file).map_err(key_error)
        })
        .await?;
        let stored = StoredKey {
            tenant: tenant.name.clone(),
            key_id: info.key_id,
            params: info.params,
            compressed: info.kind == FileKind::CompressedServerKey,
            bytes: bytes.len() as u64,
        };
        let (stored, new) = fleet.add_key(&tenant, stored, bytes, limits).await?;
        if new {
            self.keep_key((tenant.name, info.key_id), Arc::new(key));
        }
        Ok((stored, new))
    }

    fn register_in_folder(
        &self,
        f: &DataFolder,
        tenant: &Tenant,
        info: FileInfo,
        bytes: &[u8],
    ) -> Result<(StoredKey, bool), ApiError> {
        let id = info.key_id;
        let name = (tenant.name.clone(), id);
        self.check_key_room(&lock(&f.keys), tenant)?;
        let size = bytes.len() as u64;
        f.storage
            .take(&tenant.name, size, self.quota(&tenant.name))?;
        let registered = (|| {
            let key = ServerKey::from_bytes(std::path::Path::new("server key"), bytes)
                .map_err(key_error)?;
            let mut keys = lock(&f.keys);
            if let Some(k) = keys.get(&name) {
                return Ok((k.clone(), false));
            }
            self.check_key_room(&keys, tenant)?;
            let path = f.store.key_path(&tenant.name, id);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(internal)?;
            }
            write_atomic(&path, bytes, false).map_err(internal)?;
            let stored = StoredKey {
                tenant: tenant.name.clone(),
                key_id: id,
                params: info.params,
                compressed: info.kind == FileKind::CompressedServerKey,
                bytes: size,
            };
            keys.insert(name.clone(), stored.clone());
            drop(keys);
            self.keep_key(name, Arc::new(key));
            Ok((stored, true))
        })();
        if !matches!(registered, Ok((_, true))) {
            f.storage.give(&tenant.name, size);
        }
        registered
    }

    /// Forgets key `id` of `tenant` everywhere it is kept in memory (the
    /// cache, the GPU's copies).
    pub(super) fn forget_key(&self, stored: &StoredKey) {
        self.forget(&stored.tenant, stored.key_id);
    }

    /// Forgets `tenant`'s key `id` everywhere it is kept in memory.
    pub(super) fn forget(&self, tenant: &str, id: KeyId) {
        let name = (tenant.to_string(), id);
        lock(&self.cache).remove(&name);
        #[cfg(feature = "gpu")]
        lock(&self.gpu_keys).remove(&name);
        if let Ledger::Fleet(fleet) = &self.ledger {
            fleet.forget_loaded(tenant, id);
        }
    }

    /// Forgets every key kept in memory (a fleet's announcements of
    /// deleted keys may have been missed).
    pub(super) fn forget_all_keys(&self) {
        *lock(&self.cache) = super::caches::KeyCache::new(self.config.key_cache);
        #[cfg(feature = "gpu")]
        lock(&self.gpu_keys).clear();
    }
}
