//! Operation tables: a family's operations written once, a row each, with
//! `op_table!`. A row names the operation (its Rust variant and its
//! snake-case name), its fields, whether Python offers it as a method, its
//! work estimate and the algorithm that builds it. From the rows come the
//! enum, its operands, work and building, construction by name
//! ([`Arg`], for Python's generic dispatch) and the [`Row`]s that Python's
//! type stubs are written from.
//!
//! Rows are variants in order: program files (bincode) name a variant by
//! its position, so a new row goes last, and a test pins the order.

use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::operand::ValueId;
use crate::bits::gates::Gate;
use crate::bits::shift::ShiftKind;
use crate::comparison::Comparison;
use crate::error::Error;

/// An argument of an operation built by name (`from_name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A value of the program.
    Value(ValueId),
    /// Values of the program.
    Values(Vec<ValueId>),
    /// A clear integer: a constant, a factor, a count or a width.
    Int(BigInt),
    /// A comparison.
    Comparison(Comparison),
    /// A gate.
    Gate(Gate),
    /// A flag.
    Bool(bool),
    /// Clear integers (a polynomial's coefficients).
    Ints(Vec<BigInt>),
    /// One of a field's named choices ([`Kind::Choice`]), by name.
    Choice(String),
}

/// What a field holds: how it is given by name and typed in stubs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A value of the program ([`ValueId`]).
    Value,
    /// A word of the program of any width, not only the first operand's
    /// ([`AnyWidth`]: a cipher's counter or sealed bytes).
    AnyWidth,
    /// Values of the program.
    Values,
    /// A clear integer of any size.
    Int,
    /// A count or width (`usize`).
    Count,
    /// A comparison.
    Comparison,
    /// A two-input gate.
    Gate,
    /// A flag.
    Bool,
    /// Clear integers of any size.
    Ints,
    /// One of these names: a small enum's variant (a word operation's
    /// kind, a shift's direction), given by its snake-case name.
    Choice(&'static [&'static str]),
    /// A structure of values and constants, built only by its typed
    /// method (a fused sum's terms).
    Terms,
}

/// A field type of an operation row.
pub trait Field: Sized {
    /// How it is given by name.
    const KIND: Kind;

    /// The field from an argument, if the argument is of its kind.
    fn from_arg(arg: &Arg) -> Option<Self>;

    /// Appends the program values it reads, in order.
    fn push_operands(&self, _out: &mut Vec<ValueId>) {}
}

impl Field for ValueId {
    const KIND: Kind = Kind::Value;
    fn from_arg(arg: &Arg) -> Option<Self> {
        match arg {
            Arg::Value(v) => Some(*v),
            _ => None,
        }
    }
    fn push_operands(&self, out: &mut Vec<ValueId>) {
        out.push(*self);
    }
}

/// A word operand whose width need not be the first operand's (a
/// transciphering row's counter, IV or sealed bytes); the row's build
/// checks it. Stored as the value's id alone, so program files are the
/// same as with a [`ValueId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct AnyWidth(pub ValueId);

impl Field for AnyWidth {
    const KIND: Kind = Kind::AnyWidth;
    fn from_arg(arg: &Arg) -> Option<Self> {
        match arg {
            Arg::Value(v) => Some(AnyWidth(*v)),
            _ => None,
        }
    }
    fn push_operands(&self, out: &mut Vec<ValueId>) {
        out.push(self.0);
    }
}

impl Field for Vec<ValueId> {
    const KIND: Kind = Kind::Values;
    fn from_arg(arg: &Arg) -> Option<Self> {
        match arg {
            Arg::Values(v) => Some(v.clone()),
            _ => None,
        }
    }
    fn push_operands(&self, out: &mut Vec<ValueId>) {
        out.extend_from_slice(self);
    }
}

/// Makes `$T` the field of kind `$K` given by `Arg::$A` (a clear value:
/// it reads no program value).
macro_rules! arg_field {
    ($($T:ty => $K:ident, $A:ident;)*) => {$(
        impl Field for $T {
            const KIND: Kind = Kind::$K;
            fn from_arg(arg: &Arg) -> Option<Self> {
                match arg {
                    Arg::$A(v) => Some(v.to_owned()),
                    _ => None,
                }
            }
        }
    )*};
}

arg_field! {
    BigInt => Int, Int;
    Vec<BigInt> => Ints, Ints;
    bool => Bool, Bool;
    Comparison => Comparison, Comparison;
    Gate => Gate, Gate;
}

impl Field for u32 {
    const KIND: Kind = Kind::Count;
    fn from_arg(arg: &Arg) -> Option<Self> {
        match arg {
            Arg::Int(k) => k.to_u32(),
            _ => None,
        }
    }
}

impl Field for usize {
    const KIND: Kind = Kind::Count;
    fn from_arg(arg: &Arg) -> Option<Self> {
        match arg {
            Arg::Int(k) => k.to_usize(),
            _ => None,
        }
    }
}

/// Makes a small enum a [`Kind::Choice`] field: each variant given by its
/// snake-case name.
macro_rules! choice_field {
    ($T:ty { $($V:ident => $name:literal,)* }) => {
        impl $crate::api::table::Field for $T {
            const KIND: $crate::api::table::Kind =
                $crate::api::table::Kind::Choice(&[$($name),*]);
            fn from_arg(arg: &$crate::api::table::Arg) -> Option<Self> {
                match arg {
                    $($crate::api::table::Arg::Choice(c) if c == $name => Some(<$T>::$V),)*
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use choice_field;

choice_field!(ShiftKind {
    Left => "left",
    Right => "right",
    ArithRight => "arith_right",
    RotateLeft => "rotate_left",
    RotateRight => "rotate_right",
});

impl Field for Vec<(ValueId, ValueId)> {
    const KIND: Kind = Kind::Terms;
    fn from_arg(_: &Arg) -> Option<Self> {
        None
    }
    fn push_operands(&self, out: &mut Vec<ValueId>) {
        out.extend(self.iter().flat_map(|&(x, y)| [x, y]));
    }
}

impl Field for Vec<(ValueId, BigInt)> {
    const KIND: Kind = Kind::Terms;
    fn from_arg(_: &Arg) -> Option<Self> {
        None
    }
    fn push_operands(&self, out: &mut Vec<ValueId>) {
        out.extend(self.iter().map(|(x, _)| *x));
    }
}

/// One row of a table, as data: for stubs, docs and dispatch.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The Rust variant.
    pub variant: &'static str,
    /// The snake-case name it is built by ([`Arg`]s in field order).
    pub name: &'static str,
    /// Whether Python's `Value` offers it as a method of this name (its
    /// first field the value itself).
    pub python: bool,
    /// Its fields, named, in order.
    pub fields: &'static [(&'static str, Kind)],
    /// Its doc comment.
    pub doc: &'static str,
}

/// Field `i` (named `field`) of operation `op` from `args`.
pub(crate) fn field<T: Field>(op: &str, args: &[Arg], i: usize, field: &str) -> Result<T, Error> {
    let arg = args
        .get(i)
        .ok_or_else(|| Error::Config(format!("{op}: argument {} ({field}) is missing", i + 1)))?;
    T::from_arg(arg).ok_or_else(|| {
        let choices = match T::KIND {
            Kind::Choice(names) => format!(" ({})", names.join(", ")),
            _ => String::new(),
        };
        Error::Config(format!(
            "{op}: argument {} ({field}) must be {}{choices}, not {arg:?}",
            i + 1,
            kind_name(T::KIND)
        ))
    })
}

/// A kind in words, for errors.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Value => "a value",
        Kind::AnyWidth => "a word of any width",
        Kind::Values => "a list of values",
        Kind::Int => "an integer",
        Kind::Count => "a non-negative integer (a count)",
        Kind::Comparison => "a comparison",
        Kind::Gate => "a gate",
        Kind::Bool => "a flag",
        Kind::Ints => "a list of integers",
        Kind::Choice(_) => "one of the choices' names",
        Kind::Terms => "terms (built only by the typed method)",
    }
}

/// Writes a family's operations as rows. Each row:
///
/// ```text
/// /// Doc.
/// Variant(field: Type, ...) "snake_name" python: true,
///     work(len) { estimate }
///     build(b, args) { algorithm }
/// ```
///
/// `len` is the operands' lengths (`&dyn Fn(ValueId) -> u64`), `b` the
/// circuit builder, `args` the operands' values in operand order; the
/// fields are bound by reference in both blocks.
macro_rules! op_table {
    (
        $(#[doc = $edoc:literal])*
        pub enum $E:ident;
        $(
            $(#[doc = $doc:literal])*
            $V:ident($($f:ident: $t:ty),*) $name:literal python: $py:literal,
                work($len:ident) $work:block
                build($b:ident, $args:ident) $build:block
        )*
    ) => {
        $(#[doc = $edoc])*
        #[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[non_exhaustive]
        pub enum $E {
            $( $(#[doc = $doc])* $V($($t),*), )*
        }

        #[allow(unused_variables)]
        impl $E {
            /// Every operation of the family, in variant order.
            pub const ROWS: &'static [$crate::api::table::Row] = &[
                $($crate::api::table::Row {
                    variant: stringify!($V),
                    name: $name,
                    python: $py,
                    fields: &[$((stringify!($f), <$t as $crate::api::table::Field>::KIND)),*],
                    doc: concat!($($doc, "\n",)*),
                },)*
            ];

            /// Its snake-case name (its row's).
            pub fn name(&self) -> &'static str {
                match self {
                    $($E::$V(..) => $name,)*
                }
            }

            /// The values it reads, in order.
            pub fn operands(&self) -> Vec<$crate::api::operand::ValueId> {
                let mut out = Vec::new();
                match self {
                    $($E::$V($($f),*) => {
                        $($crate::api::table::Field::push_operands($f, &mut out);)*
                    })*
                }
                out
            }

            /// The operation named `name` with these fields (in row
            /// order), or a typed error for an unknown name or a wrong
            /// argument. The operands are checked when it is built.
            pub fn from_name(
                name: &str,
                args: &[$crate::api::table::Arg],
            ) -> Result<Self, $crate::error::Error> {
                $(if name == $name {
                    let fields: &[&str] = &[$(stringify!($f)),*];
                    if args.len() != fields.len() {
                        return Err($crate::error::Error::Config(format!(
                            "{name} takes {} arguments ({}), not {}",
                            fields.len(),
                            fields.join(", "),
                            args.len()
                        )));
                    }
                    let mut i = 0;
                    $(let $f: $t = $crate::api::table::field($name, args, i, stringify!($f))?;
                    i += 1;)*
                    let _ = i;
                    return Ok($E::$V($($f),*));
                })*
                Err($crate::error::Error::Config(format!(
                    "no operation named {name} in {}",
                    stringify!($E)
                )))
            }

            /// Its own share of the work bound (reading the operands is
            /// counted by [`Op`](crate::api::Op)): products of lengths for
            /// multiplications.
            pub(crate) fn work(&self, len: &dyn Fn($crate::api::operand::ValueId) -> u64) -> u64 {
                match self {
                    $($E::$V($($f),*) => {
                        let $len = len;
                        $work
                    })*
                }
            }

            /// Builds it on `b` from its operands' values (`args`, in
            /// the order of its operands).
            pub(crate) fn apply(
                &self,
                b: &mut $crate::circuit::CircuitBuilder,
                args: &[&$crate::api::operand::Val],
            ) -> Result<Vec<$crate::api::operand::Val>, $crate::error::Error> {
                match self {
                    $($E::$V($($f),*) => {
                        let ($b, $args) = (b, args);
                        $build
                    })*
                }
            }
        }
    };
}
pub(crate) use op_table;
