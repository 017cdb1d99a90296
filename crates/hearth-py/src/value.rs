//! `hearth.Value`: one value of a program, of either family. Operators
//! and methods record operations; nothing runs until the compiled
//! program does.
//!
//! Semantics: exact integers (``digitsN``, ``twosN``) are exact, their
//! lengths grow as needed; words (``u8 ... i128``) wrap like Python ints
//! reduced to their width, with ``//`` and ``%`` flooring like Python's;
//! comparisons of integers give an integer 0 or 1, of words a ``bool``.

use hearth::api::ops::{Overflowing, WordArith};
use hearth::api::table::{kind_name, Arg, Kind, Row};
use hearth::api::{BoolOp, IntOp, Op, Shape, ValueId, WordOp};
use hearth::bits::gates::Gate;
use hearth::bits::shift::ShiftKind;
use hearth::comparison::Comparison;
use num_bigint::BigInt;
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert::{dtype_name, is_bool, parse_dtype};
use crate::errors::BuildError;
use crate::program::Program;

/// One encrypted (or clear constant) value of a program: an exact
/// integer, a fixed-width word or a boolean; its type is ``dtype``.
#[pyclass(module = "hearth", frozen)]
pub struct Value {
    program: Py<Program>,
    id: ValueId,
    shape: Shape,
}

/// The other operand of a binary operation.
enum Rhs<'py> {
    Value(Bound<'py, Value>),
    Clear(BigInt),
}

/// What a value is, for dispatching operations.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Int,
    Word { bits: usize, signed: bool },
    Bool,
}

impl Value {
    pub(crate) fn new(program: Py<Program>, id: ValueId, shape: Shape) -> Self {
        Value { program, id, shape }
    }

    pub(crate) fn id(&self) -> ValueId {
        self.id
    }

    pub(crate) fn shape(&self) -> Shape {
        self.shape
    }

    pub(crate) fn program(&self) -> &Py<Program> {
        &self.program
    }

    /// An error unless this value belongs to `program`.
    pub(crate) fn check_program(&self, program: &Bound<'_, Program>) -> PyResult<()> {
        if self.program.as_ptr() != program.as_ptr() {
            return Err(BuildError::new_err("a value of another program"));
        }
        Ok(())
    }

    fn family(&self) -> Family {
        match self.shape {
            Shape::Word { bits, signed } if !is_bool(self.shape) => Family::Word { bits, signed },
            Shape::Word { .. } => Family::Bool,
            _ => Family::Int,
        }
    }

    fn prog(&self) -> &Program {
        self.program.get()
    }

    /// The values `op` makes, as Python values.
    fn made(&self, py: Python<'_>, op: impl Into<Op>) -> PyResult<Vec<Value>> {
        let p = self.prog();
        p.push(op)?
            .into_iter()
            .map(|id| Ok(Value::new(self.program.clone_ref(py), id, p.shape_of(id)?)))
            .collect()
    }

    fn one(&self, py: Python<'_>, op: impl Into<Op>) -> PyResult<Value> {
        Ok(self.made(py, op)?.remove(0))
    }

    fn pair(&self, py: Python<'_>, op: impl Into<Op>) -> PyResult<(Value, Value)> {
        let mut v = self.made(py, op)?;
        let b = v.pop().expect("two results");
        Ok((v.pop().expect("two results"), b))
    }

    /// A clear value of this value's type.
    fn constant(&self, py: Python<'_>, k: BigInt) -> PyResult<Value> {
        let op: Op = match self.shape {
            Shape::Word { bits, signed } => WordOp::Const(bits, signed, k).into(),
            _ => IntOp::Const(k).into(),
        };
        self.one(py, op)
    }

    /// `other` as a value of this program and type (clear operands become
    /// constants of this type).
    fn operand(&self, py: Python<'_>, other: &Rhs<'_>) -> PyResult<Value> {
        match other {
            Rhs::Clear(k) => self.constant(py, k.clone()),
            Rhs::Value(v) => {
                let v = v.get();
                if v.program.as_ptr() != self.program.as_ptr() {
                    return Err(BuildError::new_err(
                        "an operation on values of two programs",
                    ));
                }
                if self.family() != Family::Int && v.shape != self.shape {
                    return Err(PyTypeError::new_err(format!(
                        "{} and {}: words combine only with words of their type \
                         (convert with cast / to_int / to_word)",
                        dtype_name(self.shape),
                        dtype_name(v.shape)
                    )));
                }
                if self.family() == Family::Int && v.family() != Family::Int {
                    return Err(PyTypeError::new_err(format!(
                        "{} and {}: exact integers combine only with exact integers \
                         (convert with to_int / to_word)",
                        dtype_name(self.shape),
                        dtype_name(v.shape)
                    )));
                }
                Ok(Value::new(v.program.clone_ref(py), v.id, v.shape))
            }
        }
    }

    fn unsupported(&self, what: &str) -> PyErr {
        PyTypeError::new_err(format!(
            "{what} is not defined on {}",
            dtype_name(self.shape)
        ))
    }

    /// `self op other` (or `other op self` when `reflected`).
    fn binary(&self, py: Python<'_>, other: Rhs<'_>, op: Bin, reflected: bool) -> PyResult<Value> {
        let y = self.operand(py, &other)?;
        let (a, b) = if reflected { (&y, self) } else { (self, &y) };
        let clear = match &other {
            Rhs::Clear(k) => Some(k.clone()),
            Rhs::Value(_) => None,
        };
        match self.family() {
            Family::Int => self.int_binary(py, a, b, op, clear.filter(|_| !reflected)),
            Family::Word { bits, signed } => word_binary(py, a, b, op, bits, signed),
            Family::Bool => {
                let gate = match op {
                    Bin::And => Gate::And,
                    Bin::Or => Gate::Or,
                    Bin::Xor => Gate::Xor,
                    _ => return Err(self.unsupported(op.symbol())),
                };
                self.one(py, BoolOp::Gate(gate, a.id, b.id))
            }
        }
    }

    /// Integer operations; `clear` is the right operand when it is clear
    /// (cheaper forms: a constant sum, a scalar product, shifts).
    fn int_binary(
        &self,
        py: Python<'_>,
        a: &Value,
        b: &Value,
        op: Bin,
        clear: Option<BigInt>,
    ) -> PyResult<Value> {
        let power_of_two = |what: &str| {
            clear
                .as_ref()
                .filter(|k| **k > BigInt::from(0) && (*k & (*k - 1u8)) == BigInt::from(0))
                .map(|k| k.bits() as usize - 1)
                .ok_or_else(|| {
                    PyTypeError::new_err(format!(
                        "exact integers support {what} only by a clear power of two \
                         (use words for division)"
                    ))
                })
        };
        match (op, &clear) {
            (Bin::Add, Some(k)) => a.one(py, IntOp::AddConst(a.id, k.clone())),
            (Bin::Sub, Some(k)) => a.one(py, IntOp::AddConst(a.id, -k)),
            (Bin::Mul, Some(k)) => a.one(py, IntOp::ScalarMul(a.id, k.clone())),
            (Bin::Add, None) => a.one(py, IntOp::Add(a.id, b.id)),
            (Bin::Sub, None) => a.one(py, IntOp::Sub(a.id, b.id)),
            (Bin::Mul, None) => a.one(py, IntOp::Mul(a.id, b.id)),
            (Bin::FloorDiv, _) => {
                let k = power_of_two("//")?;
                a.one(py, IntOp::ShrFloor(a.id, k))
            }
            (Bin::Mod, _) => {
                let k = power_of_two("%")?;
                let q = a.one(py, IntOp::ShrFloor(a.id, k))?;
                let m = a.one(py, IntOp::Shl(q.id, k))?;
                a.one(py, IntOp::Sub(a.id, m.id))
            }
            _ => Err(self.unsupported(op.symbol())),
        }
    }
}

/// Word operations with Python's semantics reduced to the width.
fn word_binary(
    py: Python<'_>,
    a: &Value,
    b: &Value,
    op: Bin,
    bits: usize,
    signed: bool,
) -> PyResult<Value> {
    let arith = |w| a.one(py, WordOp::Arith(w, a.id, b.id));
    match op {
        Bin::Add => arith(WordArith::Add),
        Bin::Sub => arith(WordArith::Sub),
        Bin::Mul => arith(WordArith::Mul),
        Bin::And => arith(WordArith::And),
        Bin::Or => arith(WordArith::Or),
        Bin::Xor => arith(WordArith::Xor),
        Bin::FloorDiv | Bin::Mod if !signed => arith(if op == Bin::FloorDiv {
            WordArith::Div
        } else {
            WordArith::Rem
        }),
        Bin::FloorDiv | Bin::Mod => {
            // Truncating quotient and remainder, moved one step toward
            // minus infinity when the remainder is not 0 and its sign
            // differs from the divisor's (Python's floor division).
            let (q, r) = a.pair(py, WordOp::DivRem(a.id, b.id))?;
            let zero = a.constant(py, BigInt::from(0))?;
            let nonzero = a.one(py, WordOp::Compare(r.id, zero.id, Comparison::Ne))?;
            let x = a.one(py, WordOp::Arith(WordArith::Xor, r.id, b.id))?;
            let differ = a.one(py, WordOp::Bit(x.id, bits - 1))?;
            let adjust = a.one(py, BoolOp::Gate(Gate::And, nonzero.id, differ.id))?;
            if op == Bin::FloorDiv {
                let one = a.one(py, BoolOp::ToWord(adjust.id, bits))?;
                let one = a.one(py, WordOp::Cast(one.id, bits, signed))?;
                a.one(py, WordOp::Arith(WordArith::Sub, q.id, one.id))
            } else {
                let add = a.one(py, BoolOp::Select(adjust.id, b.id, zero.id))?;
                a.one(py, WordOp::Arith(WordArith::Add, r.id, add.id))
            }
        }
    }
}

/// Binary operators.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bin {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    And,
    Or,
    Xor,
}

impl Bin {
    fn symbol(self) -> &'static str {
        match self {
            Bin::Add => "+",
            Bin::Sub => "-",
            Bin::Mul => "*",
            Bin::FloorDiv => "//",
            Bin::Mod => "%",
            Bin::And => "&",
            Bin::Or => "|",
            Bin::Xor => "^",
        }
    }
}

/// The operand, or `None` for a type this class does not combine with (so
/// Python tries the other side: numpy arrays broadcast).
fn rhs<'py>(other: &Bound<'py, PyAny>) -> Option<Rhs<'py>> {
    if let Ok(v) = other.cast::<Value>() {
        return Some(Rhs::Value(v.clone()));
    }
    if other.hasattr("shape").unwrap_or(false) && other.hasattr("ndim").unwrap_or(false) {
        let ndim: usize = other.getattr("ndim").and_then(|n| n.extract()).unwrap_or(1);
        if ndim > 0 {
            return None;
        }
    }
    other.extract::<BigInt>().ok().map(Rhs::Clear)
}

macro_rules! binary_ops {
    ($($name:ident, $rname:ident => $op:expr;)*) => {
        #[pymethods]
        impl Value {
            $(
                fn $name<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
                    match rhs(other) {
                        Some(r) => self.binary(py, r, $op, false).map(|v| v.into_pyobject(py).map(|b| b.into_any().unbind()))?,
                        None => Ok(py.NotImplemented()),
                    }
                }
                fn $rname<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
                    match rhs(other) {
                        Some(r) => self.binary(py, r, $op, true).map(|v| v.into_pyobject(py).map(|b| b.into_any().unbind()))?,
                        None => Ok(py.NotImplemented()),
                    }
                }
            )*
        }
    };
}

binary_ops! {
    __add__, __radd__ => Bin::Add;
    __sub__, __rsub__ => Bin::Sub;
    __mul__, __rmul__ => Bin::Mul;
    __floordiv__, __rfloordiv__ => Bin::FloorDiv;
    __mod__, __rmod__ => Bin::Mod;
    __and__, __rand__ => Bin::And;
    __or__, __ror__ => Bin::Or;
    __xor__, __rxor__ => Bin::Xor;
}

/// A shift amount: clear (an int) or encrypted (an unsigned word).
fn amount<'py>(other: &Bound<'py, PyAny>) -> PyResult<Result<u64, Bound<'py, Value>>> {
    if let Ok(v) = other.cast::<Value>() {
        return Ok(Err(v.clone()));
    }
    other.extract::<u64>().map(Ok).map_err(|_| {
        PyValueError::new_err("a shift amount is a non-negative int or an unsigned word")
    })
}

impl Value {
    /// A shift or rotation (`kind`) by a clear or encrypted amount.
    fn shift(&self, py: Python<'_>, other: &Bound<'_, PyAny>, kind: ShiftKind) -> PyResult<Value> {
        match (self.family(), amount(other)?) {
            (Family::Int, Ok(k)) => {
                let k = usize::try_from(k).map_err(|_| PyValueError::new_err("shift too large"))?;
                match kind {
                    ShiftKind::Left => self.one(py, IntOp::Shl(self.id, k)),
                    ShiftKind::Right | ShiftKind::ArithRight => {
                        self.one(py, IntOp::ShrFloor(self.id, k))
                    }
                    _ => Err(self.unsupported("rotation")),
                }
            }
            (Family::Word { bits, signed }, Ok(k)) => {
                let rotate = matches!(kind, ShiftKind::RotateLeft | ShiftKind::RotateRight);
                if rotate {
                    return self.one(py, WordOp::Shift(self.id, kind, (k % bits as u64) as u32));
                }
                if k < bits as u64 {
                    return self.one(py, WordOp::Shift(self.id, kind, k as u32));
                }
                // Python's shifts of the reduced value: everything out.
                if kind == ShiftKind::ArithRight && signed {
                    return self.one(py, WordOp::Shift(self.id, kind, bits as u32 - 1));
                }
                self.constant(py, BigInt::from(0))
            }
            (Family::Word { .. }, Err(v)) => {
                let v = v.get();
                if v.program.as_ptr() != self.program.as_ptr() {
                    return Err(BuildError::new_err(
                        "an operation on values of two programs",
                    ));
                }
                if !matches!(v.family(), Family::Word { signed: false, .. }) {
                    return Err(PyTypeError::new_err(
                        "an encrypted shift amount is an unsigned word",
                    ));
                }
                self.one(py, WordOp::ShiftBy(self.id, kind, v.id))
            }
            _ => Err(self.unsupported("a shift")),
        }
    }

    fn right_kind(&self) -> ShiftKind {
        match self.family() {
            Family::Word { signed: true, .. } => ShiftKind::ArithRight,
            _ => ShiftKind::Right,
        }
    }

    fn word_only(&self, what: &str) -> PyResult<()> {
        match self.family() {
            Family::Word { .. } => Ok(()),
            _ => Err(self.unsupported(what)),
        }
    }

    fn max_min(&self, py: Python<'_>, other: &Bound<'_, PyAny>, max: bool) -> PyResult<Value> {
        let r = rhs(other).ok_or_else(|| PyTypeError::new_err("expected a value or an int"))?;
        let y = self.operand(py, &r)?;
        let op: Op = match (self.family(), max) {
            (Family::Int, true) => IntOp::Max(self.id, y.id).into(),
            (Family::Int, false) => IntOp::Min(self.id, y.id).into(),
            (Family::Word { .. }, true) => WordOp::Max(self.id, y.id).into(),
            (Family::Word { .. }, false) => WordOp::Min(self.id, y.id).into(),
            (Family::Bool, _) => return Err(self.unsupported("max / min")),
        };
        self.one(py, op)
    }

    /// A word op's wrapped result and whether it overflowed.
    fn overflowing(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        kind: Overflowing,
        what: &str,
    ) -> PyResult<(Value, Value)> {
        self.word_pair(py, other, |a, b| WordOp::Overflowing(kind, a, b), what)
    }

    fn word_pair(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: impl FnOnce(ValueId, ValueId) -> WordOp,
        what: &str,
    ) -> PyResult<(Value, Value)> {
        self.word_only(what)?;
        let r = rhs(other).ok_or_else(|| PyTypeError::new_err("expected a value or an int"))?;
        let y = self.operand(py, &r)?;
        self.pair(py, op(self.id, y.id))
    }
}

#[pymethods]
impl Value {
    /// The type's name (``"digits9"``, ``"u32"``, ``"bool"``, ...).
    #[getter]
    fn dtype(&self) -> String {
        dtype_name(self.shape)
    }

    /// Ciphertexts it takes: digits of an integer, bits of a word.
    fn __len__(&self) -> usize {
        self.shape.len()
    }

    fn __repr__(&self) -> String {
        format!("Value({}, id={})", dtype_name(self.shape), self.id.0)
    }

    fn __bool__(&self) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "an encrypted value has no truth value while the program is built: \
             use hearth.select, max / min or arithmetic instead of if / and / or",
        ))
    }

    fn __lshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Value> {
        self.shift(py, other, ShiftKind::Left)
    }

    fn __rshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Value> {
        self.shift(py, other, self.right_kind())
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Value> {
        match self.family() {
            Family::Int => self.one(py, IntOp::Neg(self.id)),
            Family::Word { .. } => self.one(py, WordOp::Neg(self.id)),
            Family::Bool => Err(self.unsupported("unary -")),
        }
    }

    fn __pos__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __invert__(&self, py: Python<'_>) -> PyResult<Value> {
        match self.family() {
            Family::Int => {
                let n = self.one(py, IntOp::Neg(self.id))?;
                n.one(py, IntOp::AddConst(n.id, BigInt::from(-1)))
            }
            Family::Word { .. } => self.one(py, WordOp::Not(self.id)),
            Family::Bool => self.one(py, BoolOp::Not(self.id)),
        }
    }

    fn __abs__(&self, py: Python<'_>) -> PyResult<Value> {
        match self.family() {
            Family::Int => self.one(py, IntOp::Abs(self.id)),
            Family::Word { signed: false, .. } => {
                Ok(Value::new(self.program.clone_ref(py), self.id, self.shape))
            }
            Family::Word { .. } => {
                let zero = self.constant(py, BigInt::from(0))?;
                let neg = self.one(py, WordOp::Compare(self.id, zero.id, Comparison::Lt))?;
                let minus = self.one(py, WordOp::Neg(self.id))?;
                self.one(py, BoolOp::Select(neg.id, minus.id, self.id))
            }
            Family::Bool => Err(self.unsupported("abs")),
        }
    }

    fn __richcmp__<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Some(r) = rhs(other) else {
            return Ok(py.NotImplemented());
        };
        let y = self.operand(py, &r)?;
        let c = match op {
            CompareOp::Lt => Comparison::Lt,
            CompareOp::Le => Comparison::Le,
            CompareOp::Gt => Comparison::Gt,
            CompareOp::Ge => Comparison::Ge,
            CompareOp::Eq => Comparison::Eq,
            CompareOp::Ne => Comparison::Ne,
        };
        let op: Op = match self.family() {
            Family::Int => IntOp::Compare(self.id, y.id, c).into(),
            _ => WordOp::Compare(self.id, y.id, c).into(),
        };
        Ok(self.one(py, op)?.into_pyobject(py)?.into_any().unbind())
    }

    /// The larger of the two (`other` a value or an int).
    fn max(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Value> {
        self.max_min(py, other, true)
    }

    /// The smaller of the two.
    fn min(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Value> {
        self.max_min(py, other, false)
    }

    /// ``max(self, 0)``.
    fn relu(&self, py: Python<'_>) -> PyResult<Value> {
        match self.family() {
            Family::Int => self.one(py, IntOp::Relu(self.id)),
            Family::Word { signed: false, .. } => {
                Ok(Value::new(self.program.clone_ref(py), self.id, self.shape))
            }
            Family::Word { .. } => {
                let zero = self.constant(py, BigInt::from(0))?;
                self.one(py, WordOp::Max(self.id, zero.id))
            }
            Family::Bool => Err(self.unsupported("relu")),
        }
    }

    /// ``self * self``.
    fn square(&self, py: Python<'_>) -> PyResult<Value> {
        match self.family() {
            Family::Int => self.one(py, IntOp::Square(self.id)),
            Family::Word { .. } => self.one(py, WordOp::Arith(WordArith::Mul, self.id, self.id)),
            Family::Bool => Err(self.unsupported("square")),
        }
    }

    /// ``floor(self / 2**k)`` for any ``k``.
    fn shr_floor(&self, py: Python<'_>, k: u64) -> PyResult<Value> {
        let k = k.into_pyobject(py)?.into_any();
        self.shift(py, &k, self.right_kind())
    }

    /// The operation named `name` of this value's family's table (the
    /// integer, word or boolean rows Python offers) on this value and
    /// `args` (or the fields named in `kwargs`): the methods the package
    /// installs from the tables (``hearth._hearth._table_ops``) call it.
    #[pyo3(signature = (name, *args, **kwargs))]
    fn _apply(
        &self,
        py: Python<'_>,
        name: &str,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Value> {
        let (rows, build) = self.table();
        let row = rows.iter().find(|r| r.python && r.name == name);
        let Some(row) = row else {
            if python_rows().any(|r| r.name == name) {
                return Err(self.unsupported(name));
            }
            return Err(PyAttributeError::new_err(format!(
                "no operation named {name}"
            )));
        };
        let params = &row.fields[1..];
        if args.len() > params.len() {
            return Err(PyTypeError::new_err(format!(
                "{name}() takes {} arguments, not {}",
                params.len(),
                args.len()
            )));
        }
        let mut given = vec![Arg::Value(self.id)];
        let mut named = 0;
        for (i, (field, kind)) in params.iter().enumerate() {
            let obj = if i < args.len() {
                args.get_item(i)?
            } else if let Some(v) = kwargs.map(|k| k.get_item(field)).transpose()?.flatten() {
                named += 1;
                v
            } else {
                return Err(PyTypeError::new_err(format!(
                    "{name}() is missing its argument {field}"
                )));
            };
            given.push(self.table_arg(py, name, field, *kind, &obj)?);
        }
        if kwargs.map_or(0, |k| k.len()) != named {
            return Err(PyTypeError::new_err(format!(
                "{name}() got an unexpected keyword argument (its arguments: {})",
                params
                    .iter()
                    .map(|(f, _)| *f)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let op = build(name, &given).map_err(crate::errors::to_py)?;
        self.one(py, op)
    }

    /// An integer modulo ``2**bits`` as a word of type `dtype`, or a
    /// boolean as an unsigned word (0 or 1).
    fn to_word(&self, py: Python<'_>, dtype: &str) -> PyResult<Value> {
        let Shape::Word { bits, signed } = parse_dtype(dtype)? else {
            return Err(PyValueError::new_err(format!("{dtype} is not a word type")));
        };
        match self.family() {
            Family::Int => self.one(py, IntOp::ToWord(self.id, bits, signed)),
            Family::Bool => {
                let w = self.one(py, BoolOp::ToWord(self.id, bits))?;
                w.one(py, WordOp::Cast(w.id, bits, signed))
            }
            Family::Word { .. } => Err(self.unsupported("to_word (use cast)")),
        }
    }

    /// A word's (or boolean's) exact value as an exact integer.
    fn to_int(&self, py: Python<'_>) -> PyResult<Value> {
        match self.family() {
            Family::Int => Err(self.unsupported("to_int")),
            _ => self.one(py, WordOp::ToInt(self.id)),
        }
    }

    /// Rust's ``as``: a word as another word type (truncated, or extended
    /// by its own signedness), or a boolean as a word (0 or 1).
    fn cast(&self, py: Python<'_>, dtype: &str) -> PyResult<Value> {
        if self.family() == Family::Bool {
            return self.to_word(py, dtype);
        }
        self.word_only("cast")?;
        let Shape::Word { bits, signed } = parse_dtype(dtype)? else {
            return Err(PyValueError::new_err(format!("{dtype} is not a word type")));
        };
        self.one(py, WordOp::Cast(self.id, bits, signed))
    }

    /// Rust's truncating ``(self / other, self % other)`` (words; a zero
    /// divisor gives all ones, or -1 / 1 when signed, and the dividend).
    fn div_rem(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<(Value, Value)> {
        self.word_pair(py, other, WordOp::DivRem, "div_rem")
    }

    /// Rust's ``checked_div``: the quotient and whether it is defined.
    fn checked_div(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<(Value, Value)> {
        self.word_pair(py, other, WordOp::CheckedDiv, "checked_div")
    }

    /// The wrapped sum and whether it overflowed.
    fn overflowing_add(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<(Value, Value)> {
        self.overflowing(py, other, Overflowing::Add, "overflowing_add")
    }

    /// The wrapped difference and whether it overflowed.
    fn overflowing_sub(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<(Value, Value)> {
        self.overflowing(py, other, Overflowing::Sub, "overflowing_sub")
    }

    /// The wrapped product and whether it overflowed.
    fn overflowing_mul(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<(Value, Value)> {
        self.overflowing(py, other, Overflowing::Mul, "overflowing_mul")
    }

    /// Rotated left by a clear amount (modulo the width) or an encrypted
    /// unsigned word.
    fn rotate_left(&self, py: Python<'_>, amount: &Bound<'_, PyAny>) -> PyResult<Value> {
        self.word_only("rotate_left")?;
        self.shift(py, amount, ShiftKind::RotateLeft)
    }

    /// Rotated right.
    fn rotate_right(&self, py: Python<'_>, amount: &Bound<'_, PyAny>) -> PyResult<Value> {
        self.word_only("rotate_right")?;
        self.shift(py, amount, ShiftKind::RotateRight)
    }

    /// ``if self { x } else { y }`` for a boolean and two words of one type.
    fn select(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
    ) -> PyResult<Value> {
        if self.family() != Family::Bool {
            return Err(self.unsupported("select (a condition is a bool)"));
        }
        let (x, y) = match (rhs(x), rhs(y)) {
            (Some(Rhs::Value(x)), Some(y)) => {
                let xv = Value::new(x.get().program.clone_ref(py), x.get().id, x.get().shape);
                let yv = xv.operand(py, &y)?;
                (xv, yv)
            }
            (Some(x), Some(Rhs::Value(y))) => {
                let yv = Value::new(y.get().program.clone_ref(py), y.get().id, y.get().shape);
                (yv.operand(py, &x)?, yv)
            }
            _ => return Err(PyTypeError::new_err("select needs at least one word value")),
        };
        if x.program.as_ptr() != self.program.as_ptr() {
            return Err(BuildError::new_err(
                "an operation on values of two programs",
            ));
        }
        if !matches!(x.family(), Family::Word { .. } | Family::Bool) {
            return Err(PyTypeError::new_err("select chooses between words"));
        }
        self.one(py, BoolOp::Select(self.id, x.id, y.id))
    }
}

impl Value {
    /// A table operation's argument `field` of kind `kind` from `obj`.
    fn table_arg(
        &self,
        py: Python<'_>,
        op: &str,
        field: &str,
        kind: Kind,
        obj: &Bound<'_, PyAny>,
    ) -> PyResult<Arg> {
        let wrong = || {
            PyTypeError::new_err(format!(
                "{op}(): {field} must be {}, not {}",
                kind_name(kind),
                obj.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        };
        Ok(match kind {
            Kind::Value => {
                let r = rhs(obj).ok_or_else(wrong)?;
                Arg::Value(self.operand(py, &r)?.id)
            }
            Kind::AnyWidth => {
                let v: Bound<'_, Value> = obj.extract().map_err(|_| wrong())?;
                let v = v.get();
                if v.program.as_ptr() != self.program.as_ptr() {
                    return Err(BuildError::new_err(
                        "an operation on values of two programs",
                    ));
                }
                Arg::Value(v.id)
            }
            Kind::Values => {
                let vs: Vec<Bound<'_, Value>> = obj.extract().map_err(|_| wrong())?;
                let ids = vs
                    .into_iter()
                    .map(|v| Ok(self.operand(py, &Rhs::Value(v))?.id))
                    .collect::<PyResult<Vec<_>>>()?;
                Arg::Values(ids)
            }
            Kind::Int => Arg::Int(obj.extract().map_err(|_| wrong())?),
            Kind::Count => {
                let n: usize = obj.extract().map_err(|_| {
                    PyValueError::new_err(format!("{op}(): {field} must be an int >= 0"))
                })?;
                Arg::Int(BigInt::from(n))
            }
            Kind::Bool => Arg::Bool(obj.extract().map_err(|_| wrong())?),
            Kind::Ints => Arg::Ints(obj.extract().map_err(|_| wrong())?),
            Kind::Choice(_) => Arg::Choice(obj.extract().map_err(|_| wrong())?),
            Kind::Comparison | Kind::Gate | Kind::Terms => return Err(wrong()),
        })
    }

    /// This value's family's table: its rows, and how a row is built by
    /// name.
    fn table(&self) -> (&'static [Row], TableBuild) {
        match self.family() {
            Family::Int => (IntOp::ROWS, |n, a| IntOp::from_name(n, a).map(Op::from)),
            Family::Word { .. } => (WordOp::ROWS, |n, a| WordOp::from_name(n, a).map(Op::from)),
            Family::Bool => (BoolOp::ROWS, |n, a| BoolOp::from_name(n, a).map(Op::from)),
        }
    }
}

/// Builds a row of one family's table by name.
type TableBuild = fn(&str, &[Arg]) -> Result<Op, hearth::Error>;

/// The rows Python offers, of every family's table.
fn python_rows() -> impl Iterator<Item = &'static Row> {
    [IntOp::ROWS, WordOp::ROWS, BoolOp::ROWS]
        .into_iter()
        .flatten()
        .filter(|r| r.python)
}

/// A table operation as Python sees it: its name, its arguments after
/// the value itself (name, stub type), its docstring.
type TableMethod = (&'static str, Vec<(&'static str, &'static str)>, String);

/// The tables' rows that Python offers as methods of `Value` (integer,
/// word and boolean rows, once per name): `(name, [(field, type)], doc)`,
/// the value itself left out. The package installs them
/// (`hearth/_ops.py`), its stubs are written from them
/// (`tests/test_package.py` compares). A method applies the row of its
/// value's own family (`Value._apply`); a name two families offer must
/// take the same arguments (`tests/op_table.rs` checks).
#[pyfunction]
pub fn _table_ops() -> Vec<TableMethod> {
    let mut seen = std::collections::HashSet::new();
    python_rows()
        .filter(|r| seen.insert(r.name))
        .map(|r| {
            let fields = r.fields[1..]
                .iter()
                .map(|(f, k)| (*f, python_type(*k)))
                .collect();
            let doc = r.doc.lines().map(str::trim).collect::<Vec<_>>().join("\n");
            (r.name, fields, doc.trim().to_string())
        })
        .collect()
}

/// A field kind's type in the stubs.
fn python_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Value => "_Operand",
        Kind::AnyWidth => "Value",
        Kind::Values => "list[Value]",
        Kind::Int | Kind::Count => "int",
        Kind::Ints => "list[int]",
        Kind::Choice(_) => "str",
        Kind::Bool => "bool",
        Kind::Comparison | Kind::Gate | Kind::Terms => "Any",
    }
}
