//! Branches on encrypted flags: the key owner decides. The server sends
//! one encrypted condition bit per decision; the owner's policy bounds how
//! many it answers and logs each one.

use hearth::api::{Encrypted, Shape};
use hearth::{Ciphertext, ClientKey};

/// Decides a branch whose condition is encrypted.
pub trait BranchOracle<D> {
    /// Whether the condition `cond` (one encrypted bit) of the branch at
    /// `pc` holds; an `Err` refuses (the run stops, its state kept).
    fn decide(&mut self, pc: u32, cond: &D) -> Result<bool, String>;
}

/// An oracle that refuses every decision: runs whose branches depend on
/// encrypted data stop there.
pub struct NoOracle;

impl<D> BranchOracle<D> for NoOracle {
    fn decide(&mut self, pc: u32, _: &D) -> Result<bool, String> {
        Err(format!("no key owner to decide the branch at {pc:#010x}"))
    }
}

/// The key owner's policy: at most `budget` decisions, each logged.
#[derive(Clone, Debug)]
pub struct Policy {
    /// The most decisions it answers (answered ones included).
    pub budget: u64,
    /// `(pc, decision)` of every answered query, in order.
    pub log: Vec<(u32, bool)>,
}

impl Policy {
    /// A policy answering at most `budget` queries.
    pub fn new(budget: u64) -> Self {
        Policy {
            budget,
            log: Vec::new(),
        }
    }

    fn record(
        &mut self,
        pc: u32,
        read: impl FnOnce() -> Result<bool, String>,
    ) -> Result<bool, String> {
        if self.log.len() as u64 >= self.budget {
            return Err(format!("decision budget of {} exhausted", self.budget));
        }
        let d = read()?;
        self.log.push((pc, d));
        Ok(d)
    }
}

/// The key owner in this process, reading clear digits (the clear
/// backend's: a set bit is stored as 2).
pub struct ClearOracle(pub Policy);

impl BranchOracle<u64> for ClearOracle {
    fn decide(&mut self, pc: u32, cond: &u64) -> Result<bool, String> {
        let v = *cond;
        self.0.record(pc, || match v {
            0 => Ok(false),
            2 => Ok(true),
            _ => Err(format!("not a flag bit: {v}")),
        })
    }
}

/// The key owner in this process, decrypting with its client key: only a
/// single bit is ever decrypted.
pub struct KeyOracle<'k> {
    /// The key owner's secret key.
    pub key: &'k ClientKey,
    /// How many decisions it answers, and its log.
    pub policy: Policy,
}

impl BranchOracle<Ciphertext> for KeyOracle<'_> {
    fn decide(&mut self, pc: u32, cond: &Ciphertext) -> Result<bool, String> {
        let key = self.key;
        self.policy.record(pc, || {
            let e = Encrypted::new(
                Shape::Word {
                    bits: 1,
                    signed: false,
                },
                vec![cond.clone()],
            )
            .map_err(|e| e.to_string())?;
            key.decrypt_bool(&e).map_err(|e| e.to_string())
        })
    }
}
