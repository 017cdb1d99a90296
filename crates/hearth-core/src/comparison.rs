//! The comparisons both integer families offer.

/// A comparison of two integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Comparison {
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
}

impl Comparison {
    /// Every comparison.
    pub const ALL: [Comparison; 6] = [
        Comparison::Lt,
        Comparison::Le,
        Comparison::Gt,
        Comparison::Ge,
        Comparison::Eq,
        Comparison::Ne,
    ];

    /// Whether `x <op> y`.
    pub fn holds<T: PartialOrd>(self, x: T, y: T) -> bool {
        match self {
            Comparison::Lt => x < y,
            Comparison::Le => x <= y,
            Comparison::Gt => x > y,
            Comparison::Ge => x >= y,
            Comparison::Eq => x == y,
            Comparison::Ne => x != y,
        }
    }

    /// Whether it holds for `x - y` of sign `s` (-1, 0 or 1).
    pub fn holds_for_sign(self, s: i64) -> bool {
        self.holds(s, 0)
    }
}
