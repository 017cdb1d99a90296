//! The server's caches, for what is costly to make again and large to
//! keep: decompressed server keys and rebuilt programs, each in a small
//! least-recently-used cache.

use std::collections::VecDeque;
use std::sync::Arc;

use hearth::{CompiledProgram, KeyId, ServerKey};

/// A key as the server knows it: the tenant that registered it, and its
/// id. Two tenants may register keys of the same id; each sees its own.
pub(super) type KeyName = (String, KeyId);

/// Server keys kept decompressed, least recently used dropped first.
pub(super) type KeyCache = Lru<KeyName, Arc<ServerKey>>;

/// Programs kept built, by the SHA3-256 of their tenant and their file.
pub(super) type ProgramCache = Lru<[u8; 32], Arc<CompiledProgram>>;

/// How many built programs the server keeps for jobs to come.
pub(super) const PROGRAMS_KEPT: usize = 16;

/// At most `cap` values by key, the least recently used dropped first
/// (a handful of entries: a linear scan is the fastest lookup).
pub(super) struct Lru<K, V> {
    cap: usize,
    entries: VecDeque<(K, V)>,
}

impl<K: PartialEq, V: Clone> Lru<K, V> {
    /// An empty cache of `cap` entries (0: keeps nothing).
    pub(super) fn new(cap: usize) -> Self {
        Lru {
            cap,
            entries: VecDeque::new(),
        }
    }

    /// The value of `key`, now the most recently used.
    pub(super) fn get(&mut self, key: &K) -> Option<V> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        let entry = self.entries.remove(i)?;
        let value = entry.1.clone();
        self.entries.push_back(entry);
        Some(value)
    }

    /// Keeps `value` under `key`, dropping the least recently used
    /// entries beyond `cap`.
    pub(super) fn put(&mut self, key: K, value: V) {
        if self.cap == 0 {
            return;
        }
        self.remove(&key);
        while self.entries.len() >= self.cap {
            self.entries.pop_front();
        }
        self.entries.push_back((key, value));
    }

    /// Forgets `key`.
    pub(super) fn remove(&mut self, key: &K) {
        self.entries.retain(|(k, _)| k != key);
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn the_least_recently_used_goes_first() {
        let mut c = Lru::new(2);
        c.put(1, "a");
        c.put(2, "b");
        assert_eq!(c.get(&1), Some("a"));
        c.put(3, "c");
        assert_eq!(
            (c.get(&1), c.get(&2), c.get(&3)),
            (Some("a"), None, Some("c"))
        );
        c.put(1, "A");
        assert_eq!(c.get(&1), Some("A"));
        c.remove(&1);
        assert_eq!(c.get(&1), None);
        let mut none = Lru::new(0);
        none.put(1, 1);
        assert_eq!(none.get(&1), None);
    }
}
