//! Automatic choices: an algorithm with several variants builds each on a
//! scratch builder and keeps the cheapest for the thread count
//! ([`cheapest`]); what it chose is remembered per thread, by what the
//! choice depends on ([`Memo`]), so that each is measured once.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::hash::Hash;

use super::CircuitBuilder;
use crate::crypto::params::ParameterSet;
use crate::error::Error;

/// The candidate whose circuit (built by `build` on a scratch builder for
/// `params` and `threads`) has the least predicted time on `threads`
/// threads (the backends' schedule replayed, [`Circuit::time_on`]), then
/// the fewest bootstraps, then the lowest depth; candidates that fail to
/// build lose.
///
/// [`Circuit::time_on`]: super::Circuit::time_on
pub fn cheapest<K: Copy>(
    params: &'static ParameterSet,
    threads: usize,
    candidates: &[K],
    build: impl Fn(&mut CircuitBuilder, K) -> Result<(), Error>,
) -> Option<K> {
    candidates
        .iter()
        .filter_map(|&k| {
            let mut b = CircuitBuilder::new(params);
            b.set_threads(threads);
            build(&mut b, k).ok()?;
            let mut c = b.build();
            // What the outputs read, where the candidate marks them.
            if !c.outputs().is_empty() {
                c.prune();
            }
            let st = c.stats();
            Some(((c.time_on(threads), st.pbs, st.depth), k))
        })
        .min_by_key(|&(cost, _)| cost)
        .map(|(_, k)| k)
}

/// Values remembered by key: one per thread, declared where the choice is
/// made (`thread_local! { static CHOICES: Memo<Key, Kind> = Memo::new(); }`).
/// The key holds everything the value depends on (parameter set, sizes,
/// thread count, ...).
pub struct Memo<K, V> {
    map: RefCell<HashMap<K, V>>,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// Nothing remembered.
    pub fn new() -> Self {
        Memo {
            map: RefCell::new(HashMap::default()),
        }
    }

    /// The value remembered for `key`, else `make`'s, then remembered.
    /// `make` may use this memo itself (a choice that measures smaller
    /// ones): nothing is borrowed while it runs.
    pub fn get_or(&self, key: K, make: impl FnOnce() -> V) -> V {
        match self.try_get_or(key, || Ok::<V, std::convert::Infallible>(make())) {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// [`Memo::get_or`] for a `make` that can fail: a failure is returned
    /// and nothing is remembered.
    pub fn try_get_or<E>(&self, key: K, make: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(v) = self.map.borrow().get(&key) {
            return Ok(v.clone());
        }
        let v = make()?;
        // A choice made while a meter stopped the build compared
        // candidates that could not be built: not kept.
        if !super::meter::stopped() {
            self.map.borrow_mut().insert(key, v.clone());
        }
        Ok(v)
    }
}

impl<K: Eq + Hash, V: Clone> Default for Memo<K, V> {
    fn default() -> Self {
        Memo::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value is made once per key; a failure is returned, not kept.
    #[test]
    fn a_memo_makes_each_value_once_and_keeps_no_failure() {
        let memo: Memo<u32, u64> = Memo::new();
        let made = std::cell::Cell::new(0);
        let square = |k: u32| {
            made.set(made.get() + 1);
            u64::from(k) * u64::from(k)
        };
        assert_eq!(memo.get_or(7, || square(7)), 49);
        assert_eq!(memo.get_or(7, || square(8)), 49, "the remembered value");
        assert_eq!(memo.get_or(3, || square(3)), 9);
        assert_eq!(made.get(), 2);
        assert_eq!(memo.try_get_or(5, || Err::<u64, &str>("no")), Err("no"));
        assert_eq!(memo.try_get_or(5, || Ok::<u64, &str>(25)), Ok(25));
        assert_eq!(memo.try_get_or(5, || Err::<u64, &str>("no")), Ok(25));
    }

    /// A value made from smaller ones of the same memo (a choice that
    /// measures its parts): no borrow is held while it is made.
    #[test]
    fn a_memo_value_may_be_made_from_the_same_memo() {
        fn fib(memo: &Memo<u64, u64>, n: u64) -> u64 {
            memo.get_or(n, || {
                if n < 2 {
                    n
                } else {
                    fib(memo, n - 1) + fib(memo, n - 2)
                }
            })
        }
        let memo = Memo::new();
        assert_eq!(fib(&memo, 90), 2_880_067_194_370_816_120);
    }
}
