//! Server keys: registered by tenants in the server's ledger (the data
//! folder, or the fleet's database and blob store), kept decompressed in
//! a least-recently-used cache counted in bytes.

use std::sync::Arc;

use hearth::{KeyId, ServerKey};

use super::lock::lock;
use super::state::Shared;
use crate::request::key_error;
use crate::store::StoredKey;
use crate::wire::ApiError;

impl Shared {
    /// The key `id` of `tenant`, from the cache or loaded (and
    /// decompressed) from the data folder or the fleet's blob store.
    pub(super) fn server_key(&self, tenant: &str, id: KeyId) -> Result<Arc<ServerKey>, ApiError> {
        let name = (tenant.to_string(), id);
        // A cached key is used only while the ledger says it may be (in a
        // fleet, another server may have deleted it).
        if !self.ledger.key_current(tenant, id)? {
            self.forget(tenant, id);
        }
        if let Some(k) = lock(&self.cache).get(&name) {
            self.metrics.key_cache.with_label_values(&["hit"]).inc();
            return Ok(k);
        }
        self.metrics.key_cache.with_label_values(&["miss"]).inc();
        let file = self.ledger.key_file(tenant, id)?;
        let key = ServerKey::from_bytes(std::path::Path::new("server key"), &file);
        let key = Arc::new(key.map_err(key_error)?);
        self.keep_key(name, key.clone());
        Ok(key)
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
        self.ledger.forget_loaded(tenant, id);
    }

    /// Forgets every key kept in memory (a fleet's announcements of
    /// deleted keys may have been missed).
    pub(super) fn forget_all_keys(&self) {
        *lock(&self.cache) = super::caches::KeyCache::new(self.config.key_cache);
        #[cfg(feature = "gpu")]
        lock(&self.gpu_keys).clear();
    }
}
