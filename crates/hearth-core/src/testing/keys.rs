//! Keys shared by the tests of one process: each parameter set's keys are
//! generated once, on first use, instead of once per test (key generation
//! is 1-2 s of a test's time here). Tests that need keys of their own
//! (wrong keys, file damage, key ids) still generate them.

use std::sync::OnceLock;

use crate::crypto::params::{ParameterSet, ALL};
use crate::{ClientKey, ServerKey};

/// The shared client and server key of `params`.
pub fn keys(params: &'static ParameterSet) -> &'static (ClientKey, ServerKey) {
    static KEYS: [OnceLock<(ClientKey, ServerKey)>; ALL.len()] =
        [const { OnceLock::new() }; ALL.len()];
    let slot = ALL
        .iter()
        .position(|p| p.id == params.id)
        .expect("every parameter set is in ALL");
    KEYS[slot].get_or_init(|| {
        let client = ClientKey::generate(params);
        let server = client.server_key();
        (client, server)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::INSECURE_TEST_BITS;

    /// Keys of one set are the same keys every time, of another set others.
    #[test]
    fn each_set_has_one_pair() {
        let (a, b) = (keys(&INSECURE_TEST_BITS), keys(&INSECURE_TEST_BITS));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a.0.key_id(), a.1.key_id());
        let other = keys(&crate::INSECURE_TEST_DIGITS);
        assert_ne!(other.0.key_id(), a.0.key_id());
    }
}
