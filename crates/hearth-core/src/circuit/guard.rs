//! Guards: what a bit is known to imply about a word, so that bits a
//! program never sets together are summed instead of gated.
//!
//! An equality of a word with a clear value is set only when the word
//! holds that value; an AND with it is set only then too; an OR (or XOR) of
//! two bits guarded by the same word is set only when the word holds one
//! of their values. Two bits guarded by the same word with disjoint values
//! are never both set, so their OR and their XOR are their sum: linear, no
//! bootstrap. A table scan `r ^ (key == i).select(v_i, 0)` then costs its
//! equalities and ANDs only.
//!
//! Facts are keyed by linear expression: wires with the same expression
//! hold the same value, whichever operation made them. Dropping a guard is
//! always sound; guards on clear wires are never kept (every clear `1`
//! shares one expression).

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use super::LinearExpr;

/// The most values one guard lists; a union past it is dropped.
const MAX_VALUES: usize = 1 << 12;

/// A bit that is set only when the word `word` (its bits' expressions,
/// least significant first) holds one of `values`.
#[derive(Clone, Debug)]
struct Guard {
    word: Arc<Vec<LinearExpr>>,
    values: Arc<BTreeSet<Vec<bool>>>,
}

impl Guard {
    fn same_word(&self, other: &Guard) -> bool {
        Arc::ptr_eq(&self.word, &other.word) || self.word == other.word
    }
}

/// The guards of one builder.
#[derive(Clone, Debug, Default)]
pub(crate) struct Guards {
    by_expr: HashMap<LinearExpr, Guard>,
    /// One shared copy of each word's key.
    words: HashMap<Vec<LinearExpr>, Arc<Vec<LinearExpr>>>,
}

impl Guards {
    fn set(&mut self, bit: &LinearExpr, guard: Guard) {
        if !bit.terms.is_empty() {
            self.by_expr.insert(bit.clone(), guard);
        }
    }

    /// `bit` is set only when `word` holds `value`.
    pub(crate) fn equal(&mut self, bit: &LinearExpr, word: Vec<LinearExpr>, value: Vec<bool>) {
        if value.len() != word.len() {
            return;
        }
        let word = self
            .words
            .entry(word.clone())
            .or_insert_with(|| Arc::new(word))
            .clone();
        let values = Arc::new(BTreeSet::from([value]));
        self.set(bit, Guard { word, values });
    }

    /// `bit` is set only when every one of `ands` is: it takes the
    /// narrowest of their guards (the intersection where two guard the
    /// same word).
    pub(crate) fn and(&mut self, bit: &LinearExpr, ands: &[&LinearExpr]) {
        let mut best: Option<Guard> = None;
        for g in ands.iter().filter_map(|e| self.by_expr.get(*e)) {
            best = Some(match best {
                Some(b) if b.same_word(g) => Guard {
                    word: b.word.clone(),
                    values: Arc::new(b.values.intersection(&g.values).cloned().collect()),
                },
                Some(b) if b.values.len() <= g.values.len() => b,
                _ => g.clone(),
            });
        }
        if let Some(g) = best {
            self.set(bit, g);
        }
    }

    /// `bit` is set only when `x` or `y` is: the union of their guards,
    /// where both guard the same word.
    pub(crate) fn or(&mut self, bit: &LinearExpr, x: &LinearExpr, y: &LinearExpr) {
        let (Some(a), Some(b)) = (self.by_expr.get(x), self.by_expr.get(y)) else {
            return;
        };
        if !a.same_word(b) || a.values.len() + b.values.len() > MAX_VALUES {
            return;
        }
        let values = Arc::new(a.values.union(&b.values).cloned().collect());
        let guard = Guard {
            word: a.word.clone(),
            values,
        };
        self.set(bit, guard);
    }

    /// Whether `x` and `y` are never both set: guarded by the same word
    /// with disjoint values.
    pub(crate) fn exclusive(&self, x: &LinearExpr, y: &LinearExpr) -> bool {
        match (self.by_expr.get(x), self.by_expr.get(y)) {
            (Some(a), Some(b)) => a.same_word(b) && a.values.is_disjoint(&b.values),
            _ => false,
        }
    }
}
