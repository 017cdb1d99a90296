//! Server keys: registered by tenants, kept decompressed in a small
//! least-recently-used cache.

use std::collections::HashMap;
use std::sync::Arc;

use hearth::crypto::files::{write_atomic, FileInfo, FileKind};
use hearth::{KeyId, ServerKey};

use super::caches::KeyName;
use super::lock::lock;
use super::state::{internal, Shared};
use crate::request::key_error;
use crate::store::StoredKey;
use crate::tenants::Tenant;
use crate::wire::{ApiError, ErrorCode};

impl Shared {
    /// The key `id` of `tenant`, from the cache or loaded (and
    /// decompressed) from disk.
    pub(super) fn server_key(&self, tenant: &str, id: KeyId) -> Result<Arc<ServerKey>, ApiError> {
        let name = (tenant.to_string(), id);
        if let Some(k) = lock(&self.cache).get(&name) {
            self.metrics.key_cache.with_label_values(&["hit"]).inc();
            return Ok(k);
        }
        self.metrics.key_cache.with_label_values(&["miss"]).inc();
        if !lock(&self.keys).contains_key(&name) {
            return Err(ApiError::new(
                ErrorCode::UnknownKey,
                format!("no server key {id} is registered"),
            ));
        }
        let key = Arc::new(ServerKey::load(&self.store.key_path(tenant, id)).map_err(key_error)?);
        lock(&self.cache).put(name, key.clone());
        Ok(key)
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
                return Err(ApiError::new(
                    ErrorCode::KeyLimit,
                    format!(
                        "you have {own} keys registered, your limit; delete one \
                         (DELETE /v1/keys/{{key_id}}) or reuse a key"
                    ),
                ));
            }
        }
        if keys.len() >= self.config.max_keys {
            return Err(ApiError::new(
                ErrorCode::TooManyKeys,
                "the server holds as many keys as it may; try again later",
            ));
        }
        Ok(())
    }

    /// Checks (by decoding it: a compressed key is expanded), stores and
    /// registers a key `tenant` uploaded. Its room and its bytes are
    /// taken first, so a refused upload costs no decoding and no disk.
    pub(super) fn register_key(
        &self,
        tenant: &Tenant,
        info: FileInfo,
        bytes: &[u8],
    ) -> Result<(StoredKey, bool), ApiError> {
        let id = info.key_id;
        let name = (tenant.name.clone(), id);
        self.check_key_room(&lock(&self.keys), tenant)?;
        let size = bytes.len() as u64;
        self.storage
            .take(&tenant.name, size, self.quota(&tenant.name))?;
        let registered = (|| {
            let key = ServerKey::from_bytes(std::path::Path::new("server key"), bytes)
                .map_err(key_error)?;
            let mut keys = lock(&self.keys);
            if let Some(k) = keys.get(&name) {
                return Ok((k.clone(), false));
            }
            self.check_key_room(&keys, tenant)?;
            let path = self.store.key_path(&tenant.name, id);
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
            lock(&self.cache).put(name, Arc::new(key));
            Ok((stored, true))
        })();
        if !matches!(registered, Ok((_, true))) {
            self.storage.give(&tenant.name, size);
        }
        registered
    }

    /// Forgets key `id` of `tenant` everywhere it is kept in memory (the
    /// cache, the GPU's copies) and gives its bytes back.
    pub(super) fn forget_key(&self, stored: &StoredKey) {
        let name = (stored.tenant.clone(), stored.key_id);
        lock(&self.cache).remove(&name);
        #[cfg(feature = "gpu")]
        lock(&self.gpu_keys).remove(&name);
        self.storage.give(&stored.tenant, stored.bytes);
    }
}
