//! Server keys: registered by tenants, kept decompressed in a small
//! least-recently-used cache.

use std::collections::VecDeque;
use std::sync::Arc;

use hearth::crypto::files::{write_atomic, FileInfo, FileKind};
use hearth::{KeyId, ServerKey};

use super::state::{internal, lock, Shared};
use crate::api::{ApiError, ErrorCode};
use crate::request::key_error;
use crate::store::StoredKey;
use crate::tenants::Tenant;

/// A key as the server knows it: the tenant that registered it, and its
/// id. Two tenants may register keys of the same id; each sees its own.
pub(super) type KeyName = (String, KeyId);

/// Least recently used server keys.
pub(super) struct KeyCache {
    pub(super) cap: usize,
    pub(super) keys: VecDeque<(KeyName, Arc<ServerKey>)>,
}

impl KeyCache {
    pub(super) fn get(&mut self, id: &KeyName) -> Option<Arc<ServerKey>> {
        let i = self.keys.iter().position(|(k, _)| k == id)?;
        let entry = self.keys.remove(i).expect("found");
        let key = entry.1.clone();
        self.keys.push_back(entry);
        Some(key)
    }

    pub(super) fn put(&mut self, id: KeyName, key: Arc<ServerKey>) {
        if self.cap == 0 {
            return;
        }
        self.keys.retain(|(k, _)| *k != id);
        while self.keys.len() >= self.cap {
            self.keys.pop_front();
        }
        self.keys.push_back((id, key));
    }
}

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

    /// Stores, checks (by loading it) and registers a key `tenant`
    /// uploaded.
    pub(super) fn register_key(
        &self,
        tenant: &Tenant,
        info: FileInfo,
        bytes: &[u8],
    ) -> Result<(StoredKey, bool), ApiError> {
        let id = info.key_id;
        let name = (tenant.name.clone(), id);
        let upload = self.store.upload_path(&tenant.name, id);
        write_atomic(&upload, bytes, false).map_err(internal)?;
        let loaded = ServerKey::load(&upload);
        let result = (|| {
            let key = loaded.map_err(key_error)?;
            let mut keys = lock(&self.keys);
            if let Some(k) = keys.get(&name) {
                return Ok((k.clone(), false));
            }
            if let Some(l) = tenant.limits {
                let own = keys.keys().filter(|(t, _)| *t == tenant.name).count();
                if own >= l.max_keys {
                    return Err(ApiError::new(
                        ErrorCode::KeyLimit,
                        format!(
                            "you have {own} keys registered, your limit; remove one \
                             (ask the operator) or reuse a key"
                        ),
                    ));
                }
            }
            if keys.len() >= self.config.max_keys {
                return Err(ApiError::new(
                    ErrorCode::TooManyKeys,
                    format!("{} keys are registered, the limit", keys.len()),
                ));
            }
            std::fs::rename(&upload, self.store.key_path(&tenant.name, id)).map_err(internal)?;
            let stored = StoredKey {
                tenant: tenant.name.clone(),
                key_id: id,
                params: info.params,
                compressed: info.kind == FileKind::CompressedServerKey,
                bytes: bytes.len() as u64,
            };
            keys.insert(name.clone(), stored.clone());
            drop(keys);
            lock(&self.cache).put(name, Arc::new(key));
            Ok((stored, true))
        })();
        let _ = std::fs::remove_file(&upload);
        result
    }
}
