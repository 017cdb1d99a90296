//! Programs: one circuit built lazily by typed values ([`super::Int`],
//! [`super::Word`], [`super::Bool`]), then run on any backend. How values
//! become digits is in [`crate::crypto::encoding`].
//!
//! Operators cannot return errors: the first error any operation meets is
//! kept by the program and reported by [`Program::build`] (a value made
//! after an error is a placeholder of the right shape).

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use super::operand::Val;
use super::ops::{Op, ValueId};
use num_bigint::BigInt;

use crate::backend::{Backend, ClearBackend, CpuBackend, RunReport};
use crate::bits::{self, Bits};
use crate::circuit::{Circuit, CircuitBuilder, Wire};
use crate::crypto::encoding::{
    clear_digits, clear_digits_twos, clear_value, clear_word, clear_word_value, Encrypted, Shape,
};
pub(crate) use crate::crypto::encoding::{digits_within, within};
use crate::crypto::keys::{Ciphertext, ServerKey};
use crate::crypto::params::{Margin, ParameterSet};
use crate::digits::{self, Digits};
use crate::error::{BuildError, Error};
use crate::formats::bundle::{check_inputs, check_values, full_file_len, Bundle, Entry};
use crate::formats::program_head::{memory_estimate, Signature};
use crate::formats::{check_cover, Param};

pub(crate) struct State {
    pub(crate) builder: CircuitBuilder,
    pub(crate) error: Option<Error>,
    pub(super) inputs: Vec<Shape>,
    outputs: Vec<Shape>,
    /// Every value made so far, by [`ValueId`].
    pub(super) values: Vec<Val>,
    /// The op that made each value (an index into `ops`).
    pub(super) made_by: Vec<usize>,
    /// The ops applied, in order: the program as data.
    pub(super) ops: Vec<Op>,
    /// The bootstraps each op built.
    pub(super) op_pbs: Vec<usize>,
    /// The outputs, by value.
    pub(super) output_ids: Vec<ValueId>,
    /// The thread count the first ops were planned for.
    pub(crate) threads: usize,
    /// The plan in force before the last [`Op::PlanThreads`] recorded.
    prior_plan: usize,
    /// The keystreams the program's transciphering ops used with clear
    /// counters or IVs, to refuse a second use ([`Error::KeystreamReused`]).
    keystreams: Vec<Keystream>,
}

/// A keystream a transciphering op used: AES-CTR blocks `start ..
/// start + blocks` (mod 2^128) under the round keys `keys`, or Kreyvium's
/// stream from `start` (the IV) under the key `keys`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Keystream {
    aes: bool,
    keys: ValueId,
    start: u128,
    blocks: u128,
}

impl Keystream {
    fn overlaps(&self, other: &Keystream) -> bool {
        if self.aes != other.aes || self.keys != other.keys {
            return false;
        }
        if !self.aes {
            return self.start == other.start;
        }
        // Ranges on the ring of 2^128 counters.
        let ahead = |a: &Keystream, b: &Keystream| b.start.wrapping_sub(a.start) < a.blocks;
        ahead(self, other) || ahead(other, self)
    }
}

impl State {
    /// An empty program on `params`, planned for `threads`.
    pub(super) fn new(params: &'static ParameterSet, threads: Option<usize>) -> State {
        let mut builder = CircuitBuilder::new(params);
        if let Some(t) = threads {
            builder.set_threads(t);
        }
        State {
            threads: builder.threads(),
            prior_plan: builder.threads(),
            builder,
            error: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
            values: Vec::new(),
            made_by: Vec::new(),
            ops: Vec::new(),
            op_pbs: Vec::new(),
            output_ids: Vec::new(),
            keystreams: Vec::new(),
        }
    }

    /// The keystream `op` uses, when it is a transciphering op with a
    /// clear counter or IV; an error when an earlier op used any of it.
    fn check_keystream(&mut self, op: &Op) -> Result<(), Error> {
        use super::word_op::WordOp;
        let (aes, keys, start, sealed) = match op {
            Op::Word(WordOp::AesCtr(keys, counter, sealed)) => (true, *keys, counter.0, sealed.0),
            Op::Word(WordOp::Kreyvium(key, iv, sealed)) => (false, *key, *iv, sealed.0),
            _ => return Ok(()),
        };
        let clear = |id: ValueId, st: &State| -> Option<u128> {
            st.values
                .get(id.0 as usize)?
                .wires()
                .iter()
                .enumerate()
                .try_fold(0u128, |acc, (i, &w)| {
                    let bit = st.builder.constant_value(w).ok()??;
                    (i < 128).then_some(acc | (u128::from(bit != 0) << i))
                })
        };
        let Some(start) = clear(start, self) else {
            return Ok(());
        };
        let bits = self
            .values
            .get(sealed.0 as usize)
            .map_or(0, |v| v.wires().len());
        let use_ = Keystream {
            aes,
            keys,
            start,
            blocks: (bits as u128).div_ceil(128).max(1),
        };
        if let Some(k) = self.keystreams.iter().find(|k| k.overlaps(&use_)) {
            return Err(Error::KeystreamReused(if aes {
                format!(
                    "AES-CTR blocks from counter {:#x} under the round keys of value {} were used \
                     earlier in this program (from counter {:#x}, {} blocks)",
                    use_.start, keys.0, k.start, k.blocks
                )
            } else {
                format!(
                    "Kreyvium's IV {:#x} under the key of value {} was used earlier in this program",
                    use_.start, keys.0
                )
            }));
        }
        self.keystreams.push(use_);
        Ok(())
    }

    /// Builds `op` and records it with its results (`ops` keeps `recorded`,
    /// the op as the user wrote it, which `op` may fuse).
    ///
    /// A thread plan that changes nothing is not recorded, and one right
    /// after another takes its place: such ops cost a program file their
    /// bytes, never memory.
    pub(super) fn push(&mut self, op: &Op, recorded: Op) -> Result<Vec<Val>, Error> {
        if let Op::PlanThreads(t) = *op {
            let t = t.max(1);
            if t != self.builder.threads() {
                match self.ops.last_mut() {
                    // Back to the plan before the last: both go.
                    Some(Op::PlanThreads(_)) if t == self.prior_plan => {
                        self.ops.pop();
                        self.op_pbs.pop();
                    }
                    Some(last @ Op::PlanThreads(_)) => *last = recorded,
                    _ => {
                        self.prior_plan = self.builder.threads();
                        self.record(recorded, Vec::new(), 0);
                    }
                }
                self.builder.set_threads(t);
            }
            return Ok(Vec::new());
        }
        self.check_keystream(op)?;
        let before = self.builder.bootstrap_count();
        let vals = apply_checked(self, op)?;
        if let Op::Input(shape) = op {
            self.inputs.push(*shape);
        }
        // What the record holds, for a meter bounding a rebuild.
        let bytes = std::mem::size_of::<Op>()
            + std::mem::size_of_val(&op.operands()[..])
            + vals
                .iter()
                .map(|v| std::mem::size_of::<Val>() + std::mem::size_of_val(v.wires()))
                .sum::<usize>();
        crate::circuit::meter::spend(0, bytes as u64)?;
        self.record(
            recorded,
            vals.clone(),
            self.builder.bootstrap_count() - before,
        );
        Ok(vals)
    }

    /// Records `op` as having made `vals` with `pbs` bootstraps.
    pub(super) fn record(&mut self, op: Op, vals: Vec<Val>, pbs: usize) {
        self.made_by
            .extend(std::iter::repeat_n(self.ops.len(), vals.len()));
        self.values.extend(vals);
        self.ops.push(op);
        self.op_pbs.push(pbs);
    }

    /// Marks value `id` as an output (a word is read bit by bit with a
    /// margin of one unit, an integer digit by digit with half a unit).
    pub(super) fn mark_output(&mut self, id: ValueId) -> Result<(), Error> {
        let Some(v) = self.values.get(id.0 as usize).cloned() else {
            return Err(Error::Config(format!(
                "output {} of a program with {} values",
                id.0,
                self.values.len()
            )));
        };
        let shape = v.shape();
        let margin = match shape {
            Shape::Int { .. } | Shape::TwosInt { .. } => Margin::Half,
            Shape::Word { .. } => Margin::One,
        };
        for &w in v.wires() {
            self.builder.output_decoded(w, margin)?;
        }
        self.outputs.push(shape);
        self.output_ids.push(id);
        Ok(())
    }
}

/// A program under construction: the values made from it build one
/// circuit, so independent work of the whole program runs together.
pub struct Program {
    pub(crate) state: RefCell<State>,
}

/// A typed value of a program: something that can be an output.
pub trait Value {
    /// Its shape.
    fn shape(&self) -> Shape;
    /// Its wires, least significant first.
    fn wires(&self) -> &[Wire];
    /// The program it belongs to.
    fn program(&self) -> &Program;
    /// Which of the program's values it is.
    fn id(&self) -> ValueId;
}

/// The id of a value made after an error: never read (a program with an
/// error applies nothing more).
pub(crate) const NO_VALUE: ValueId = ValueId(u32::MAX);

impl Program {
    /// A new program on `params`. Each family checks that the parameters
    /// carry it when its first value is made (the digits family needs
    /// `pi >= 5`, the bits family spread selectors on `pi >= 3`), so a
    /// mismatch is [`Error::UnsupportedParams`] from [`Program::build`].
    pub fn new(params: &'static ParameterSet) -> Self {
        Program {
            state: RefCell::new(State::new(params, None)),
        }
    }

    /// Plans algorithms for `threads` threads (default: this machine's
    /// cores): few threads favour fewer bootstraps, many a lower depth.
    pub fn set_threads(&self, threads: usize) {
        self.apply(Op::PlanThreads(threads));
    }

    /// The parameter set the program is built for.
    pub fn params(&self) -> &'static ParameterSet {
        self.state.borrow().builder.params()
    }

    /// Runs `f` on the builder unless an error came first; keeps the first
    /// error and returns `None` then.
    pub(crate) fn run<T>(
        &self,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<T, Error>,
    ) -> Option<T> {
        let mut st = self.state.borrow_mut();
        if st.error.is_some() {
            return None;
        }
        match f(&mut st.builder) {
            Ok(v) => Some(v),
            Err(e) => {
                st.error = Some(e);
                None
            }
        }
    }

    /// Keeps `e` unless an error came first.
    pub(crate) fn fail(&self, e: Error) {
        let mut st = self.state.borrow_mut();
        if st.error.is_none() {
            st.error = Some(e);
        }
    }

    /// The id of `x` in this program, or an error kept for
    /// [`Program::build`] (`None`) for a value of another program.
    pub(crate) fn id_of(&self, x: &(impl Value + ?Sized), what: &str) -> Option<ValueId> {
        if std::ptr::eq(x.program(), self) {
            Some(x.id())
        } else {
            self.fail(
                BuildError::ForeignWire {
                    node: format!("{what} of another program"),
                }
                .into(),
            );
            None
        }
    }

    /// Builds `op` and records it: its results with their ids, or `None`
    /// after an error (this op's, kept for [`Program::build`], or an
    /// earlier one). Every result keeps its family's promise (digits in
    /// {-1, 0, 1} of quadratic weight at most 1, or bits), checked here.
    pub(crate) fn apply(&self, op: Op) -> Option<Vec<(ValueId, Val)>> {
        let mut st = self.state.borrow_mut();
        if st.error.is_some() {
            return None;
        }
        let first = st.values.len();
        match st.push(&op, op.clone()) {
            Ok(vals) => Some(
                vals.into_iter()
                    .enumerate()
                    .map(|(i, v)| (ValueId((first + i) as u32), v))
                    .collect(),
            ),
            Err(e) => {
                st.error = Some(e);
                None
            }
        }
    }

    /// Builds a value with `f`, code outside the library's ops
    /// ([`super::Word::from_circuit`]); recorded as [`Op::Custom`], so the
    /// program cannot be written to a file.
    pub(crate) fn custom(
        &self,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Val, Error>,
    ) -> Option<(ValueId, Val)> {
        let mut st = self.state.borrow_mut();
        if st.error.is_some() {
            return None;
        }
        let before = st.builder.bootstrap_count();
        let made = f(&mut st.builder).and_then(|v| check_result(&st.builder, v));
        match made {
            Ok(v) => {
                let pbs = st.builder.bootstrap_count() - before;
                st.record(Op::Custom, vec![v.clone()], pbs);
                Some((ValueId((st.values.len() - 1) as u32), v))
            }
            Err(e) => {
                st.error = Some(e);
                None
            }
        }
    }

    /// Value `id`, if made.
    pub(crate) fn value(&self, id: ValueId) -> Option<Val> {
        self.state.borrow().values.get(id.0 as usize).cloned()
    }

    /// The digits (or bits) of value `id`; 0 for a value not made.
    pub(crate) fn value_len(&self, id: ValueId) -> u64 {
        let st = self.state.borrow();
        st.values
            .get(id.0 as usize)
            .map_or(0, |v| v.wires().len() as u64)
    }

    /// Marks `x` as an output.
    pub fn output(&self, x: &impl Value) {
        if let Some(id) = self.id_of(x, "an output") {
            self.output_id(id);
        }
    }

    /// Marks value `id` as an output (a word is read bit by bit with a
    /// margin of one unit, an integer digit by digit with half a unit).
    pub(crate) fn output_id(&self, id: ValueId) {
        let mut st = self.state.borrow_mut();
        if st.error.is_some() {
            return;
        }
        if let Err(e) = st.mark_output(id) {
            st.error = Some(e);
        }
    }

    /// The finished program, or the first error any operation met.
    pub fn build(self) -> Result<CompiledProgram, Error> {
        let st = self.state.into_inner();
        if let Some(e) = st.error {
            return Err(e);
        }
        let alternatives = replanned(&st);
        let st = super::fuse::fuse(st);
        let source = (!st.ops.contains(&Op::Custom)).then(|| {
            Arc::new(Source {
                threads: st.threads,
                ops: st.ops,
                outputs: st.output_ids,
            })
        });
        let signature = scalar_signature(&st.inputs, &st.outputs);
        let mut circuit = st.builder.build();
        circuit.prune();
        if let Some((threads, others)) = alternatives {
            let mut best = circuit.time_on(threads);
            for other in others {
                let mut c = super::fuse::fuse(other).builder.build();
                c.prune();
                let t = c.time_on(threads);
                if t < best {
                    (circuit, best) = (c, t);
                }
            }
        }
        Ok(CompiledProgram {
            circuit,
            inputs: st.inputs,
            outputs: st.outputs,
            signature,
            source,
        })
    }
}

/// Plans for many threads are chosen op by op, and a shallower op can
/// leave the whole program deeper (a prefix adder's carries where a ripple
/// would have been pruned). Above this many threads a program is also
/// built as planned for [`REPLAN`]'s counts, and the circuit with the
/// least predicted time on its own threads is kept.
const REPLAN_ABOVE: usize = 8;

/// The other plans tried: for 2 threads (the fewest bootstraps) and for
/// four times as many (the shallowest).
const REPLAN: [fn(usize) -> usize; 2] = [|_| 2, |t| 4 * t];

/// `st`'s ops replayed as planned for other thread counts, with the count
/// they are judged on; `None` where it plans for few threads, changes its
/// plan midway, or holds an op that cannot be replayed. Deterministic in
/// the ops, so a program file rebuilds to the same circuit.
fn replanned(st: &State) -> Option<(usize, Vec<State>)> {
    // The plan each op was built with must be one.
    let (mut current, mut planned) = (st.threads, None);
    for op in &st.ops {
        match op {
            Op::PlanThreads(t) => current = *t,
            Op::Custom => return None,
            _ if planned.is_some_and(|p| p != current) => return None,
            _ => planned = Some(current),
        }
    }
    let threads = planned.unwrap_or(current);
    if threads <= REPLAN_ABOVE {
        return None;
    }
    let params = st.builder.params();
    let replay = |t: usize| -> Option<State> {
        let mut other = State::new(params, Some(t));
        for op in &st.ops {
            let built = match op {
                Op::PlanThreads(_) => Op::PlanThreads(t),
                op => op.clone(),
            };
            other.push(&built, built.clone()).ok()?;
        }
        for &id in &st.output_ids {
            other.mark_output(id).ok()?;
        }
        Some(other)
    };
    let others = REPLAN
        .iter()
        .map(|f| f(threads))
        .filter(|&t| t != threads)
        .filter_map(replay)
        .collect();
    Some((threads, others))
}

/// The ops a compiled program was built from, and its outputs: what a
/// program file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    /// The thread count the first ops were planned for.
    pub(crate) threads: usize,
    pub(crate) ops: Vec<Op>,
    pub(crate) outputs: Vec<ValueId>,
}

/// [`Op::apply`] on `st`'s values: the family's parameters checked
/// first, each operand looked up (an id not yet made is an error), each
/// result checked.
fn apply_checked(st: &mut State, op: &Op) -> Result<Vec<Val>, Error> {
    let (ints, words) = op.families();
    if ints {
        digits::check_params(st.builder.params())?;
    }
    if words {
        bits::check_params(st.builder.params())?;
    }
    let ids = op.operands();
    let mut args = Vec::with_capacity(ids.len());
    for id in &ids {
        args.push(st.values.get(id.0 as usize).ok_or_else(|| {
            Error::Config(format!(
                "an operation reads value {} of a program with {} values",
                id.0,
                st.values.len()
            ))
        })?);
    }
    let vals = op.apply(&mut st.builder, &args)?;
    vals.into_iter()
        .map(|v| check_result(&st.builder, v))
        .collect()
}

/// A result keeps its family's promise: each digit in {-1, 0, 1} of
/// quadratic weight at most 1, or each bit a bit; and its size is within
/// [`crate::api::MAX_DIGITS`].
fn check_result(b: &CircuitBuilder, v: Val) -> Result<Val, Error> {
    digits_within("a result", v.wires().len() as u64)?;
    Ok(match v {
        Val::Int(d) => Val::Int(Digits::from_wires(b, d.wires().to_vec())?),
        Val::Word(x, signed) => Val::Word(Bits::from_wires(b, x.wires().to_vec())?, signed),
    })
}

/// A built program: its circuit and the shapes of its inputs and outputs.
#[derive(Clone, Debug)]
pub struct CompiledProgram {
    circuit: Circuit,
    inputs: Vec<Shape>,
    outputs: Vec<Shape>,
    /// Names and tensor dims over the inputs and outputs.
    signature: Signature,
    /// The ops it was built from (`None` when one was
    /// [`Op::Custom`]): what [`CompiledProgram::save`] writes.
    pub(crate) source: Option<Arc<Source>>,
}

/// One scalar param per value: inputs `x0, x1, ...`, outputs `y0, ...`.
fn scalar_signature(inputs: &[Shape], outputs: &[Shape]) -> Signature {
    let named = |prefix: &str, shapes: &[Shape]| {
        shapes
            .iter()
            .enumerate()
            .map(|(i, &s)| Param::new(format!("{prefix}{i}"), s, &[]))
            .collect()
    };
    Signature {
        inputs: named("x", inputs),
        outputs: named("y", outputs),
    }
}

impl CompiledProgram {
    /// The built circuit (for the count backend, files and statistics).
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// The shape of each input, in order.
    pub fn input_shapes(&self) -> &[Shape] {
        &self.inputs
    }

    /// The shape of each output, in order.
    pub fn output_shapes(&self) -> &[Shape] {
        &self.outputs
    }

    /// Its named inputs and outputs (by default one scalar each: `x0,
    /// ...`, `y0, ...`).
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The bytes it holds in memory: its circuit, its signature and the
    /// operations it was built from (unless dropped by
    /// [`CompiledProgram::without_source`]).
    pub fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let params = |ps: &[Param]| -> usize {
            ps.iter()
                .map(|p| size_of::<Param>() + p.name.capacity() + p.dims.capacity() * 8)
                .sum()
        };
        let source = self.source.as_ref().map_or(0, |s| {
            s.ops.capacity() * size_of::<Op>()
                + s.ops.iter().map(Op::heap_bytes).sum::<usize>()
                + s.outputs.capacity() * size_of::<ValueId>()
        });
        let shapes = (self.inputs.capacity() + self.outputs.capacity()) * size_of::<Shape>();
        self.circuit.heap_bytes()
            + (size_of::<CompiledProgram>()
                + shapes
                + params(&self.signature.inputs)
                + params(&self.signature.outputs)
                + source) as u64
    }

    /// The program without the operations it was built from: it runs as
    /// before and holds only its circuit, but cannot be written to a file
    /// ([`CompiledProgram::to_bytes`] refuses it). For a server that keeps
    /// programs only to run them.
    pub fn without_source(mut self) -> CompiledProgram {
        self.source = None;
        self
    }

    /// Names the inputs and outputs: each `(name, dims)` takes the next
    /// `dims`' product of values, which must share one shape, and the
    /// groups must cover every input (and every output) exactly.
    pub fn with_signature(
        mut self,
        inputs: &[(&str, &[usize])],
        outputs: &[(&str, &[usize])],
    ) -> Result<Self, Error> {
        let group = |groups: &[(&str, &[usize])], shapes: &[Shape], what: &str| {
            let mut next = 0usize;
            let params = groups
                .iter()
                .map(|&(name, dims)| {
                    let shape = shapes.get(next).copied().ok_or_else(|| {
                        Error::Dimensions(format!(
                            "{what} {name} starts at value {next}, the program has {}",
                            shapes.len()
                        ))
                    })?;
                    let p = Param::new(name, shape, dims);
                    next = next.saturating_add(p.count()?);
                    Ok(p)
                })
                .collect::<Result<Vec<_>, Error>>()?;
            check_cover(&params, shapes, what)?;
            Ok::<_, Error>(params)
        };
        self.signature = Signature {
            inputs: group(inputs, &self.inputs, "input")?,
            outputs: group(outputs, &self.outputs, "output")?,
        };
        Ok(self)
    }

    /// Takes a signature read from a file, checked against the shapes.
    pub(crate) fn set_signature(&mut self, sig: Signature) -> Result<(), Error> {
        check_cover(&sig.inputs, &self.inputs, "input")?;
        check_cover(&sig.outputs, &self.outputs, "output")?;
        self.signature = sig;
        Ok(())
    }

    /// Checks `bundle` against the inputs: the same names, shapes and dims
    /// in order, and the program's parameter set.
    pub fn check_bundle(&self, bundle: &Bundle) -> Result<(), Error> {
        check_inputs(
            self.circuit.params(),
            &self.signature.inputs,
            bundle.params(),
            &bundle.signature(),
        )?;
        bundle.check_not_packed()
    }

    /// Checks, before anything runs, that its results may be packed
    /// ([`Bundle::packed`]) and still decrypt with the set's failure
    /// probability: every output digit's noise within the set's
    /// [`ParameterSet::packed_output_budgets`](crate::crypto::params::ParameterSet::packed_output_budgets).
    /// The error ([`Error::Packed`]) names the first outputs that are not;
    /// their results travel unpacked.
    pub fn check_packable(&self) -> Result<(), Error> {
        let over = self.circuit.unpackable_outputs();
        let Some(first) = over.first() else {
            return Ok(());
        };
        // Output digits follow the signature's outputs in order.
        let mut digit = 0;
        let mut name = String::from("an output");
        'find: for p in &self.signature.outputs {
            for i in 0..p.count()? {
                if first.index < digit + p.shape.len() {
                    name = if p.dims.is_empty() {
                        format!("output {:?}", p.name)
                    } else {
                        format!("output {:?} (value {i})", p.name)
                    };
                    break 'find;
                }
                digit += p.shape.len();
            }
        }
        Err(Error::Packed(format!(
            "{name} (and {} more digits) cannot be packed: quadratic weight {} over the \
             packed budget {} of {}; its results travel unpacked",
            over.len() - 1,
            first.weight,
            first.budget,
            self.circuit.params()
        )))
    }

    /// Packs `results` of this program (from [`CompiledProgram::run_bundle`])
    /// with `key`'s packing key, after [`CompiledProgram::check_packable`]:
    /// what a server sends back instead of every ciphertext in full (the
    /// owner decrypts it with [`crate::ClientKey::decrypt_bundle`]).
    pub fn pack(&self, key: &ServerKey, results: &Bundle) -> Result<Bundle, Error> {
        self.check_packable()?;
        check_inputs(
            self.circuit.params(),
            &self.signature.outputs,
            results.params(),
            &results.signature(),
        )?;
        results.packed(key)
    }

    /// Reads input bundle bytes for this program (`origin` names them in
    /// errors): [`Bundle::from_bytes_expecting`] its parameter set and
    /// inputs, so a bundle that does not fit is refused, with the errors
    /// of [`CompiledProgram::check_bundle`], before it is expanded or its
    /// ciphertexts checked.
    pub fn bundle_from_bytes(&self, origin: &Path, bytes: &[u8]) -> Result<Bundle, Error> {
        Bundle::from_bytes_expecting(origin, bytes, self.circuit.params(), &self.signature.inputs)
    }

    /// [`CompiledProgram::bundle_from_bytes`]'s checks without expanding a
    /// compact bundle ([`Bundle::check_bytes_expecting`]).
    pub fn check_bundle_bytes(&self, origin: &Path, bytes: &[u8]) -> Result<(), Error> {
        Bundle::check_bytes_expecting(origin, bytes, self.circuit.params(), &self.signature.inputs)
    }

    /// The size in bytes of the result file [`CompiledProgram::run_bundle`]
    /// then [`Bundle::save`] write: every output ciphertext in full.
    pub fn result_bytes(&self) -> u64 {
        full_file_len(self.circuit.params(), &self.signature.outputs)
    }

    /// Runs on a bundle of inputs (checked first by
    /// [`CompiledProgram::check_bundle`]); the outputs come back as a
    /// bundle under the same key, named by the signature.
    pub fn run_bundle<B: Backend<Digit = Ciphertext>>(
        &self,
        backend: &B,
        bundle: &Bundle,
    ) -> Result<Bundle, Error> {
        self.check_bundle(bundle)?;
        let inputs: Vec<Encrypted> = bundle.values().cloned().collect();
        let mut outputs = self.run_encrypted(backend, &inputs)?.into_iter();
        let entries = self
            .signature
            .outputs
            .iter()
            .map(|p| {
                let n = p.count()?;
                Ok(Entry {
                    param: p.clone(),
                    values: outputs.by_ref().take(n).collect(),
                })
            })
            .collect::<Result<_, Error>>()?;
        Bundle::new(bundle.params(), bundle.key_id(), entries)
    }

    /// Runs on the clear backend with plain values, one list per
    /// signature input (row-major), checked and encoded as
    /// [`crate::ClientKey::encrypt_bundle`] would: the outputs as plain
    /// values, one list per signature output. For tests and debugging
    /// without keys.
    pub fn run_clear(&self, values: &[Vec<BigInt>]) -> Result<Vec<Vec<BigInt>>, Error> {
        let params = self.circuit.params().params();
        let ins = &self.signature.inputs;
        check_values(ins, values)?;
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for (p, vs) in ins.iter().zip(values) {
            for v in vs {
                inputs.push(match p.shape {
                    Shape::Int { digits } => clear_digits(params, v.clone(), digits)?,
                    Shape::TwosInt { bits } => clear_digits_twos(params, v.clone(), bits)?,
                    Shape::Word { bits, signed } => clear_word(v.clone(), bits, signed)?,
                });
            }
        }
        let outs = self.run(&ClearBackend, &inputs)?;
        let mut plain = outs
            .iter()
            .zip(&self.outputs)
            .map(|(d, shape)| match shape {
                Shape::Word { signed, .. } => clear_word_value(d, *signed),
                _ => Ok(clear_value(params, d)),
            });
        self.signature
            .outputs
            .iter()
            .map(|p| plain.by_ref().take(p.count()?).collect())
            .collect()
    }

    /// Runs on `backend`: one digit vector per input, one per output.
    pub fn run<B: Backend>(
        &self,
        backend: &B,
        inputs: &[Vec<B::Digit>],
    ) -> Result<Vec<Vec<B::Digit>>, Error>
    where
        B::Digit: Clone,
    {
        let flat = self.flatten(inputs)?;
        Ok(self.split(backend.evaluate(&self.circuit, &flat)?))
    }

    /// The inputs as one list of circuit inputs, each checked against its
    /// declared shape.
    fn flatten<D: Clone>(&self, inputs: &[Vec<D>]) -> Result<Vec<D>, Error> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::InputCount {
                expected: self.inputs.len(),
                found: inputs.len(),
            });
        }
        let mut flat = Vec::new();
        for (i, (v, shape)) in inputs.iter().zip(&self.inputs).enumerate() {
            if v.len() != shape.len() {
                return Err(Error::DoesNotFit {
                    value: format!("input {i} of {} ciphertexts", v.len()),
                    target: format!("the program's input {i}, {shape}"),
                });
            }
            flat.extend_from_slice(v);
        }
        Ok(flat)
    }

    /// The circuit's outputs, one vector per program output.
    fn split<D>(&self, out: Vec<D>) -> Vec<Vec<D>> {
        let mut out = out.into_iter();
        self.outputs
            .iter()
            .map(|s| out.by_ref().take(s.len()).collect())
            .collect()
    }

    /// Runs on encrypted values (e.g. on a [`crate::backend::CpuBackend`]);
    /// each input must have the shape the program declared.
    pub fn run_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        backend: &B,
        inputs: &[Encrypted],
    ) -> Result<Vec<Encrypted>, Error> {
        let ins = self.encrypted_inputs(inputs)?;
        self.wrap_outputs(self.run(backend, &ins)?)
    }

    /// [`CompiledProgram::run_encrypted`] on the cpu backend, with its
    /// report (time, peak ciphertexts alive).
    pub fn run_encrypted_report(
        &self,
        cpu: &CpuBackend<'_>,
        inputs: &[Encrypted],
    ) -> Result<(Vec<Encrypted>, RunReport), Error> {
        let flat = self.flatten(&self.encrypted_inputs(inputs)?)?;
        let (out, report) = cpu.run(&self.circuit, &flat)?;
        Ok((self.wrap_outputs(self.split(out))?, report))
    }

    fn encrypted_inputs(&self, inputs: &[Encrypted]) -> Result<Vec<Vec<Ciphertext>>, Error> {
        for (i, (x, shape)) in inputs.iter().zip(&self.inputs).enumerate() {
            if x.shape() != *shape {
                return Err(Error::ShapeMismatch {
                    what: format!("input {i}"),
                    expected: *shape,
                    found: x.shape(),
                });
            }
        }
        Ok(inputs.iter().map(|x| x.ciphertexts().to_vec()).collect())
    }

    fn wrap_outputs(&self, out: Vec<Vec<Ciphertext>>) -> Result<Vec<Encrypted>, Error> {
        out.into_iter()
            .zip(&self.outputs)
            .map(|(cts, &shape)| Encrypted::new(shape, cts))
            .collect()
    }

    /// Bytes an encrypted run needs, estimated before it starts: the most
    /// ciphertexts alive at once (levels in order, each value freed after
    /// its last use) times one ciphertext, plus one bootstrap accumulator
    /// per thread.
    pub fn memory_estimate(&self, threads: usize) -> u64 {
        memory_estimate(
            self.circuit.params(),
            self.circuit.stats().peak_live,
            threads,
        )
    }

    /// Refuses a run whose [`CompiledProgram::memory_estimate`] exceeds
    /// `limit` bytes, with [`Error::TooLarge`], before anything runs.
    pub fn check_memory(&self, threads: usize, limit: u64) -> Result<(), Error> {
        within(
            || "the run's estimated memory (bytes; raise the limit or split the work)".into(),
            self.memory_estimate(threads),
            limit,
        )
    }
}
