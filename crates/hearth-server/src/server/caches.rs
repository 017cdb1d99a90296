//! The server's caches, for what is costly to make again and large to
//! keep: decompressed server keys and rebuilt programs, each a
//! least-recently-used cache counted in bytes. Together they hold at most
//! what `--max-memory` leaves beside the running jobs' estimates, and give
//! way to a job that starts ([`super::state::Shared::make_room`]).

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

/// The bytes a decompressed server key holds.
pub(super) fn key_bytes(key: &ServerKey) -> u64 {
    hearth::ServerKeySizes::of(key.params()).decompressed()
}

/// At most `cap` values by key, and at most the bytes the caller allows
/// at each insertion; the least recently used dropped first (a handful
/// of entries: a linear scan is the fastest lookup).
pub(super) struct Lru<K, V> {
    cap: usize,
    entries: VecDeque<(K, V, u64)>,
    bytes: u64,
}

impl<K: PartialEq, V: Clone> Lru<K, V> {
    /// An empty cache of `cap` entries (0: keeps nothing).
    pub(super) fn new(cap: usize) -> Self {
        Lru {
            cap,
            entries: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The bytes of the values kept.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The value of `key`, now the most recently used.
    pub(super) fn get(&mut self, key: &K) -> Option<V> {
        let i = self.entries.iter().position(|(k, _, _)| k == key)?;
        let entry = self.entries.remove(i)?;
        let value = entry.1.clone();
        self.entries.push_back(entry);
        Some(value)
    }

    /// Keeps `value` (of `bytes`) under `key`, dropping the least
    /// recently used entries beyond `cap` entries or beyond `room` bytes
    /// in all; a value larger than `room` is not kept. Whether it was.
    pub(super) fn put(&mut self, key: K, value: V, bytes: u64, room: u64) -> bool {
        self.remove(&key);
        if self.cap == 0 || bytes > room {
            return false;
        }
        while self.entries.len() >= self.cap {
            self.pop();
        }
        self.shrink(room - bytes);
        self.bytes += bytes;
        self.entries.push_back((key, value, bytes));
        true
    }

    /// Drops the least recently used entries until at most `room` bytes
    /// are kept.
    pub(super) fn shrink(&mut self, room: u64) {
        while self.bytes > room {
            self.pop();
        }
    }

    fn pop(&mut self) {
        if let Some((_, _, b)) = self.entries.pop_front() {
            self.bytes -= b;
        }
    }

    /// Forgets `key`.
    pub(super) fn remove(&mut self, key: &K) {
        if let Some(i) = self.entries.iter().position(|(k, _, _)| k == key) {
            if let Some((_, _, b)) = self.entries.remove(i) {
                self.bytes -= b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn the_least_recently_used_goes_first() {
        let mut c = Lru::new(2);
        c.put(1, "a", 1, u64::MAX);
        c.put(2, "b", 1, u64::MAX);
        assert_eq!(c.get(&1), Some("a"));
        c.put(3, "c", 1, u64::MAX);
        assert_eq!(
            (c.get(&1), c.get(&2), c.get(&3)),
            (Some("a"), None, Some("c"))
        );
        c.put(1, "A", 1, u64::MAX);
        assert_eq!(c.get(&1), Some("A"));
        c.remove(&1);
        assert_eq!(c.get(&1), None);
        assert_eq!(c.bytes(), 1);
        let mut none = Lru::new(0);
        assert!(!none.put(1, 1, 1, u64::MAX));
        assert_eq!(none.get(&1), None);
    }

    #[test]
    fn bytes_are_bounded_by_the_room_given() {
        let mut c = Lru::new(16);
        assert!(c.put(1, 'a', 60, 100));
        assert!(c.put(2, 'b', 30, 100));
        assert_eq!(c.bytes(), 90);
        // 50 more in 100: the oldest (60) goes.
        assert!(c.put(3, 'c', 50, 100));
        assert_eq!((c.get(&1), c.bytes()), (None, 80));
        // Larger than the room: not kept, nothing dropped for it.
        assert!(!c.put(4, 'd', 101, 100));
        assert_eq!((c.get(&4), c.bytes()), (None, 80));
        // Replacing a key counts its new size only.
        assert!(c.put(2, 'B', 10, 100));
        assert_eq!((c.get(&2), c.bytes()), (Some('B'), 60));
        c.shrink(15);
        assert_eq!(c.bytes(), 10);
        assert_eq!((c.get(&3), c.get(&2)), (None, Some('B')));
        c.shrink(0);
        assert_eq!(c.bytes(), 0);
    }
}
