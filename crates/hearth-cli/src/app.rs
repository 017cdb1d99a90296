//! `hearth app ...`: applications on real data. Each encrypts its inputs,
//! runs the whole computation as one circuit (with a progress bar:
//! bootstraps done / total, rate, time left), decrypts, and compares with
//! plain Rust integer arithmetic and with the Python reference the data
//! came with.

use std::path::{Path, PathBuf};
use std::time::Instant;

use hearth::api::{CompiledProgram, Encrypted, Program, I32};
use hearth::kernels::io::{read_csv, read_npy, write_csv};
use hearth::kernels::{self, ConvOrder, Element, Padding, Tensor, Weights};
use hearth::{ClientKey, Error, FileError, ParameterSet, DIGITS_128};
use num_bigint::BigInt;
use serde_json::{json, Value};

use hearth_cli::backend;
use hearth_cli::options::Engine;
use hearth_cli::options::{BackendArg, Family, FamilyArg, Format, MaxMemory, Threads};
use hearth_cli::progress::{cpu_with_bar, generate, pbs_bar};

/// What every application takes.
#[derive(clap::Args)]
pub struct Common {
    #[command(flatten)]
    family: FamilyArg,
    #[command(flatten)]
    threads: Threads,
    #[command(flatten)]
    backend: BackendArg,
    #[command(flatten)]
    max_memory: MaxMemory,
    /// Also write the results to this file (default: none): one row per
    /// input with the decrypted and the expected outputs.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The format of --out: json or csv (default: from --out's extension,
    /// csv when it names neither).
    #[arg(long, value_name = "FORMAT", value_enum)]
    format: Option<Format>,
    /// Instead of running, write the compiled program (program.hprog),
    /// its clear inputs (values.json, for `hearth encrypt --values`) and
    /// the clear model's outputs (expected.json, as `hearth decrypt`
    /// prints them) into this folder (default: run).
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
pub enum App {
    /// Linear-regression inference y = X w + b on the diabetes dataset.
    Regression {
        /// Rows to encrypt and evaluate (from the start of the input).
        #[arg(long, value_name = "N", default_value_t = 10)]
        rows: usize,
        /// Features: a CSV with columns f0..f9 (and `target`), or an NPY [rows, 10].
        #[arg(long, value_name = "FILE", default_value = "data/diabetes/rows.csv")]
        input: PathBuf,
        /// The quantised model (weights, bias).
        #[arg(long, value_name = "FILE", default_value = "data/diabetes/model.json")]
        model: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// A small quantised CNN (conv 3x3 + ReLU + avg-pool 2 + dense) on 8x8 digits.
    Digits {
        /// Images to encrypt and classify (from the start of the input).
        #[arg(long, value_name = "N", default_value_t = 3)]
        images: usize,
        /// Images: a CSV with columns p0..p63 (and `label`, `prediction`), or an NPY [n, 8, 8].
        #[arg(
            long,
            value_name = "FILE",
            default_value = "data/digits/test_images.csv"
        )]
        input: PathBuf,
        /// The quantised model.
        #[arg(long, value_name = "FILE", default_value = "data/digits/model.json")]
        model: PathBuf,
        #[command(flatten)]
        common: Common,
    },
}

impl App {
    /// The thread option when the application runs on `--backend mpi`.
    pub fn mpi_threads(&self) -> Option<Threads> {
        let (App::Regression { common, .. } | App::Digits { common, .. }) = self;
        (common.backend.backend == Engine::Mpi).then_some(common.threads)
    }
}

pub fn run(app: App) -> Result<(), Error> {
    match app {
        App::Regression {
            rows,
            input,
            model,
            common,
        } => regression(rows, &input, &model, &common),
        App::Digits {
            images,
            input,
            model,
            common,
        } => digits(images, &input, &model, &common),
    }
}

// ---------------------------------------------------------------- data

fn bad(path: &Path, reason: impl Into<String>) -> Error {
    FileError::Malformed {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
    .into()
}

fn read_json(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| bad(path, e.to_string()))
}

/// The integers of a (nested) JSON array, flattened, with its shape.
fn json_ints(path: &Path, v: &Value, what: &str) -> Result<(Vec<usize>, Vec<i64>), Error> {
    fn walk(v: &Value, depth: usize, shape: &mut Vec<usize>, out: &mut Vec<i64>) -> Option<()> {
        match v {
            Value::Array(items) => {
                if shape.len() == depth {
                    shape.push(items.len());
                } else if shape[depth] != items.len() {
                    return None;
                }
                items
                    .iter()
                    .try_for_each(|x| walk(x, depth + 1, shape, out))
            }
            Value::Number(n) => {
                (shape.len() == depth).then_some(())?;
                out.push(n.as_i64()?);
                Some(())
            }
            _ => None,
        }
    }
    let (mut shape, mut out) = (Vec::new(), Vec::new());
    walk(v, 0, &mut shape, &mut out).ok_or_else(|| {
        bad(
            path,
            format!("`{what}` is not a rectangular array of integers"),
        )
    })?;
    Ok((shape, out))
}

fn field<'a>(path: &Path, v: &'a Value, keys: &[&str]) -> Result<&'a Value, Error> {
    keys.iter()
        .try_fold(v, |v, k| v.get(k))
        .ok_or_else(|| bad(path, format!("no `{}`", keys.join("."))))
}

/// Rows of `columns` from a CSV (by name) or an NPY (reshaped to `[n,
/// columns.len()]`), the first `n`.
fn read_rows(path: &Path, columns: &[String], n: usize) -> Result<Vec<Vec<i64>>, Error> {
    let width = columns.len();
    let (total, data) = if path.extension().is_some_and(|e| e == "npy") {
        let t = read_npy(path)?;
        if width == 0 || t.len() % width != 0 {
            return Err(bad(
                path,
                format!("shape {:?} is not rows of {width} values", t.shape()),
            ));
        }
        (t.len() / width, t.into_data())
    } else {
        let t = read_csv(path)?;
        let idx: Vec<usize> = columns
            .iter()
            .map(|c| {
                t.column(c)
                    .ok_or_else(|| bad(path, format!("no column `{c}`")))
            })
            .collect::<Result<_, _>>()?;
        let cols = t.header.len();
        let rows = t.rows.shape()[0];
        let mut data = Vec::with_capacity(rows * width);
        for r in 0..rows {
            data.extend(idx.iter().map(|&i| t.rows.data()[r * cols + i]));
        }
        (rows, data)
    };
    if n > total {
        return Err(Error::Config(format!(
            "{}: {n} rows asked, {total} present",
            path.display()
        )));
    }
    Ok(data.chunks(width).take(n).map(<[i64]>::to_vec).collect())
}

/// An optional integer column of a CSV input (e.g. the Python reference).
fn csv_column(path: &Path, name: &str, n: usize) -> Option<Vec<i64>> {
    if path.extension().is_some_and(|e| e == "npy") {
        return None;
    }
    read_rows(path, &[name.to_string()], n)
        .ok()
        .map(|r| r.into_iter().map(|v| v[0]).collect())
}

// ---------------------------------------------------------------- running

/// The family's inputs and how to make and encrypt one input value that
/// holds every value of `values`. Both families run on DIGITS_128, the one
/// key of `Int`s and words.
struct Plan {
    params: &'static ParameterSet,
    family: Family,
    digits: usize,
}

impl Plan {
    fn new(family: Family, values: impl Iterator<Item = i64>) -> Result<Self, Error> {
        let max = values.map(|v| v.unsigned_abs()).max().unwrap_or(0);
        let digits = match family {
            Family::Int => (64 - max.leading_zeros() as usize).max(1),
            Family::Words if max > i32::MAX as u64 => {
                return Err(Error::Config(format!(
                    "an input of magnitude {max} does not fit i32"
                )));
            }
            Family::Words => 32,
        };
        Ok(Plan {
            params: &DIGITS_128,
            family,
            digits,
        })
    }

    fn encrypt(&self, client: &ClientKey, v: i64) -> Result<Encrypted, Error> {
        match self.family {
            Family::Int => client.encrypt_int(v, self.digits),
            Family::Words => client.encrypt_word(v as i32),
        }
    }

    fn decrypt(&self, client: &ClientKey, x: &Encrypted) -> Result<i64, Error> {
        match self.family {
            Family::Int => client.decrypt_i64(x),
            Family::Words => Ok(client.decrypt_word::<i32>(x)? as i64),
        }
    }
}

/// Builds `kernel` on encrypted inputs of `shape` in `plan`'s family.
fn compile(
    plan: &Plan,
    threads: usize,
    shape: &[usize],
    kernel: &dyn Fn(&Program, Inputs<'_>) -> Result<(), Error>,
) -> Result<CompiledProgram, Error> {
    let p = Program::new(plan.params);
    p.set_threads(threads);
    {
        let n: usize = shape.iter().product();
        let inputs = match plan.family {
            Family::Int => Inputs::Ints(Tensor::new(
                shape,
                (0..n).map(|_| p.input(plan.digits)).collect(),
            )?),
            Family::Words => Inputs::Words(Tensor::new(
                shape,
                (0..n).map(|_| I32::input(&p)).collect(),
            )?),
        };
        kernel(&p, inputs)?;
    }
    p.build()
}

/// The encrypted inputs of either family.
enum Inputs<'p> {
    Ints(Tensor<hearth::Int<'p>>),
    Words(Tensor<I32<'p>>),
}

/// Calls `$f` (generic over the element type) on the inputs.
macro_rules! each_family {
    ($inputs:expr, $f:ident, $p:expr $(, $arg:expr)*) => {
        match $inputs {
            Inputs::Ints(x) => $f($p, &x $(, $arg)*),
            Inputs::Words(x) => $f($p, &x $(, $arg)*),
        }
    };
}

/// `--export DIR`: the program file, its inputs and the expected outputs
/// (each a JSON object of the signature's names, nested by its dims).
fn export(
    dir: &Path,
    prog: &CompiledProgram,
    inputs: &[(&str, &[i64])],
    outputs: &[(&str, &[i64])],
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, params: &[hearth::Param], values: &[(&str, &[i64])]| {
        let entries: Vec<_> = params
            .iter()
            .zip(values)
            .map(|(p, (_, vs))| (p.clone(), vs.iter().map(|&v| BigInt::from(v)).collect()))
            .collect();
        let path = dir.join(name);
        crate::values::write_json(&path, &entries)?;
        Ok::<_, Error>(path)
    };
    let sig = prog.signature();
    let program = dir.join("program.hprog");
    prog.save(&program)?;
    let values = write("values.json", &sig.inputs, inputs)?;
    let expected = write("expected.json", &sig.outputs, outputs)?;
    let st = prog.circuit().stats();
    for f in [&program, &values, &expected] {
        let len = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({len} bytes)", f.display());
    }
    println!(
        "{}: {} PBS, depth {}; run it with `hearth encrypt --values {}`, `hearth run`, `hearth decrypt`",
        prog.circuit().params().params().name,
        st.pbs,
        st.depth,
        values.display()
    );
    Ok(())
}

/// Encrypts `values`, runs `prog`, decrypts its outputs; prints a summary.
fn execute(
    prog: &CompiledProgram,
    plan: &Plan,
    values: &[i64],
    common: &Common,
) -> Result<Vec<i64>, Error> {
    let threads = common.threads.resolve()?;
    let st = prog.circuit().stats();
    let estimate = prog.memory_estimate(threads);
    eprintln!(
        "circuit: {} PBS, depth {}, widest level {}, estimated memory {:.0} MiB",
        st.pbs,
        st.depth,
        st.max_width(),
        estimate as f64 / (1 << 20) as f64
    );
    prog.check_memory(threads, common.max_memory.bytes())?;
    let (client, server) = generate(plan.params);
    let ins: Vec<Encrypted> = values
        .iter()
        .map(|&v| plan.encrypt(&client, v))
        .collect::<Result<_, _>>()?;
    let bar = pbs_bar(st.pbs);
    if let Some(gpu) = backend::gpu_only(common.backend.backend, &server)? {
        let start = Instant::now();
        let out = prog.run_encrypted(&gpu, &ins)?;
        eprintln!(
            "ran {} PBS on the gpu in {:.1} s",
            st.pbs,
            start.elapsed().as_secs_f64()
        );
        return out.iter().map(|o| plan.decrypt(&client, o)).collect();
    }
    if common.backend.backend == Engine::Mpi {
        let mpi = backend::with_bar(
            common.backend.backend,
            &server,
            None,
            Some(threads),
            Some(&bar),
        )?;
        let start = Instant::now();
        let out = prog.run_encrypted(&mpi, &ins)?;
        bar.finish_and_clear();
        eprintln!(
            "ran {} PBS on {} in {:.1} s",
            st.pbs,
            mpi.describe(),
            start.elapsed().as_secs_f64()
        );
        return out.iter().map(|o| plan.decrypt(&client, o)).collect();
    }
    let cpu = cpu_with_bar(&server, threads, &bar)?;
    let start = Instant::now();
    let (out, report) = prog.run_encrypted_report(&cpu, &ins)?;
    let wall = start.elapsed();
    bar.finish_and_clear();
    eprintln!(
        "ran {} PBS on {} threads in {:.1} s ({:.0} PBS/s), peak {} ciphertexts alive ({:.0} MiB)",
        report.pbs,
        threads,
        wall.as_secs_f64(),
        report.pbs as f64 / wall.as_secs_f64(),
        report.peak_live,
        (report.peak_live as u64 * plan.params.ciphertext_bytes()) as f64 / (1 << 20) as f64
    );
    out.iter().map(|o| plan.decrypt(&client, o)).collect()
}

/// Writes the results where `--out` asks, then fails unless every
/// decrypted `what` equals the clear model's.
fn conclude(
    common: &Common,
    exact: bool,
    header: &[&str],
    table: &[Vec<i64>],
    summary: Value,
    what: &str,
) -> Result<(), Error> {
    if let Some(out) = &common.out {
        let format = common
            .format
            .or_else(|| Format::of_path(out))
            .unwrap_or(Format::Csv);
        write_results(out, format, header, table, summary)?;
    }
    if !exact {
        return Err(Error::Config(format!(
            "decrypted {what} differ from the clear model"
        )));
    }
    Ok(())
}

fn write_results(
    out: &Path,
    format: Format,
    header: &[&str],
    rows: &[Vec<i64>],
    summary: Value,
) -> Result<(), Error> {
    if format == Format::Npy {
        return Err(Error::Config(
            "`hearth app --out` writes json or csv, not npy".into(),
        ));
    }
    if format == Format::Json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                Value::Object(
                    header
                        .iter()
                        .zip(r)
                        .map(|(h, v)| (h.to_string(), json!(v)))
                        .collect(),
                )
            })
            .collect();
        let text = serde_json::to_string_pretty(&json!({"summary": summary, "rows": rows}))
            .map_err(|e| Error::Config(e.to_string()))?;
        std::fs::write(out, text).map_err(|source| FileError::Io {
            path: out.to_path_buf(),
            source,
        })?;
        Ok(())
    } else {
        write_csv(out, header, rows)
    }
}

// ---------------------------------------------------------------- regression

fn regression(rows: usize, input: &Path, model: &Path, common: &Common) -> Result<(), Error> {
    let m = read_json(model)?;
    let (wshape, w) = json_ints(model, field(model, &m, &["weights"])?, "weights")?;
    let bias = field(model, &m, &["bias"])?
        .as_i64()
        .ok_or_else(|| bad(model, "`bias` is not an integer"))?;
    let scale = field(model, &m, &["weight_scale"])?.as_i64().unwrap_or(1);
    if wshape.len() != 1 || w.is_empty() {
        return Err(bad(
            model,
            format!("weights of shape {wshape:?}: expected a vector"),
        ));
    }
    let k = w.len();
    let names: Vec<String> = (0..k).map(|i| format!("f{i}")).collect();
    let x = read_rows(input, &names, rows)?;
    let target = csv_column(input, "target", rows);
    let threads = common.threads.resolve()?;
    let plan = Plan::new(common.family.family, x.iter().flatten().copied())?;
    let wt = Tensor::from_i64(&[k, 1], &w)?;
    let bt = Tensor::from_i64(&[1], &[bias])?;
    fn kernel<'p, E: Element<'p>>(
        p: &'p Program,
        x: &Tensor<E>,
        w: &Tensor<BigInt>,
        b: &Tensor<BigInt>,
    ) -> Result<(), Error> {
        for y in kernels::matmul_clear(p, x, w, Some(b))?.data() {
            p.output(y);
        }
        Ok(())
    }
    let prog = compile(&plan, threads, &[rows, k], &|p, ins| {
        each_family!(ins, kernel, p, &wt, &bt)
    })?;
    // Plain Rust integers.
    let want: Vec<i64> = x
        .iter()
        .map(|r| r.iter().zip(&w).map(|(a, b)| a * b).sum::<i64>() + bias)
        .collect();
    if let Some(dir) = &common.export {
        let prog = prog.with_signature(&[("x", &[rows, k])], &[("y", &[rows])])?;
        return export(dir, &prog, &[("x", &x.concat())], &[("y", &want)]);
    }
    let got = execute(&prog, &plan, &x.concat(), common)?;
    let mut table = Vec::new();
    println!("| row | encrypted y | clear y | y / scale | target |\n|---|---|---|---|---|");
    for i in 0..rows {
        let t = target.as_ref().map_or(0, |t| t[i]);
        println!(
            "| {i} | {} | {} | {:.1} | {} |",
            got[i],
            want[i],
            got[i] as f64 / scale as f64,
            t
        );
        table.push(vec![i as i64, got[i], want[i], t]);
    }
    let exact = got == want;
    println!(
        "\n{rows} rows: encrypted {} the plain integer model",
        if exact { "equals" } else { "DIFFERS FROM" }
    );
    let summary = json!({"rows": rows, "exact": exact, "pbs": prog.circuit().stats().pbs, "weight_scale": scale});
    conclude(
        common,
        exact,
        &["row", "encrypted", "clear", "target"],
        &table,
        summary,
        "predictions",
    )
}

// ---------------------------------------------------------------- digits CNN

/// The quantised CNN of `data/digits/model.json`.
struct Cnn {
    conv_w: Vec<i64>,
    conv_b: Vec<i64>,
    channels: usize,
    dense_w: Vec<i64>,
    dense_b: Vec<i64>,
    classes: usize,
}

impl Cnn {
    fn load(path: &Path) -> Result<Self, Error> {
        let m = read_json(path)?;
        let (cs, conv_w) = json_ints(path, field(path, &m, &["conv", "weights"])?, "conv.weights")?;
        let (_, conv_b) = json_ints(path, field(path, &m, &["conv", "bias"])?, "conv.bias")?;
        let (ds, dense_w) = json_ints(
            path,
            field(path, &m, &["dense", "weights"])?,
            "dense.weights",
        )?;
        let (_, dense_b) = json_ints(path, field(path, &m, &["dense", "bias"])?, "dense.bias")?;
        let pool = field(path, &m, &["pool"])?.as_u64();
        if cs.len() != 4 || cs[1] != 1 || cs[2] != 3 || cs[3] != 3 || conv_b.len() != cs[0] {
            return Err(bad(
                path,
                format!("conv weights {cs:?}: expected [R, 1, 3, 3] and R biases"),
            ));
        }
        let channels = cs[0];
        if ds.len() != 2 || ds[1] != channels * 9 || dense_b.len() != ds[0] || pool != Some(2) {
            return Err(bad(
                path,
                format!(
                    "dense weights {ds:?}: expected [classes, {}], pool 2",
                    channels * 9
                ),
            ));
        }
        Ok(Cnn {
            conv_w,
            conv_b,
            channels,
            classes: ds[0],
            dense_w,
            dense_b,
        })
    }

    /// The logits of one image, in plain Rust integers (the model's spec).
    fn logits(&self, x: &[i64]) -> Vec<i64> {
        let r = self.channels;
        let mut a = vec![0i64; r * 36];
        for o in 0..r {
            for i in 0..6 {
                for j in 0..6 {
                    let mut s = self.conv_b[o];
                    for k in 0..3 {
                        for l in 0..3 {
                            s += self.conv_w[o * 9 + k * 3 + l] * x[(i + k) * 8 + j + l];
                        }
                    }
                    a[(o * 6 + i) * 6 + j] = s.max(0);
                }
            }
        }
        let mut pooled = Vec::with_capacity(r * 9);
        for o in 0..r {
            for i in 0..3 {
                for j in 0..3 {
                    let at = |y: usize, z: usize| a[(o * 6 + y) * 6 + z];
                    let s = at(2 * i, 2 * j)
                        + at(2 * i, 2 * j + 1)
                        + at(2 * i + 1, 2 * j)
                        + at(2 * i + 1, 2 * j + 1);
                    pooled.push(s.div_euclid(4));
                }
            }
        }
        (0..self.classes)
            .map(|c| {
                self.dense_b[c]
                    + (0..r * 9)
                        .map(|f| self.dense_w[c * r * 9 + f] * pooled[f])
                        .sum::<i64>()
            })
            .collect()
    }

    /// The same on encrypted images `[n, 1, 8, 8]`, all in one circuit.
    fn build<'p, E: Element<'p>>(&self, p: &'p Program, x: &Tensor<E>) -> Result<(), Error> {
        let n = x.shape()[0];
        let r = self.channels;
        let cw = Tensor::from_i64(&[r, 1, 3, 3], &self.conv_w)?;
        let cb = Tensor::from_i64(&[r], &self.conv_b)?;
        // Dense weights as [features, classes] for a row-vector product.
        let dw = Tensor::from_fn(&[r * 9, self.classes], |ij| {
            BigInt::from(self.dense_w[ij[1] * r * 9 + ij[0]])
        })?;
        let db = Tensor::from_i64(&[self.classes], &self.dense_b)?;
        for img in x.data().chunks(64).take(n) {
            let img = Tensor::new(&[1, 8, 8], img.to_vec())?;
            let c = kernels::conv2d(
                p,
                &img,
                &Weights::Clear(&cw),
                Some(&cb),
                1,
                Padding(0),
                ConvOrder::PerOutput,
            )?;
            let a = kernels::relu(&c);
            let pooled = kernels::avg_pool(p, &a, 2)?.reshape(&[1, r * 9])?;
            let logits = kernels::matmul_clear(p, &pooled, &dw, Some(&db))?;
            // One length for all, so the logits form one output tensor.
            for l in kernels::widen_all(logits.data()) {
                p.output(&l);
            }
        }
        Ok(())
    }
}

fn argmax(v: &[i64]) -> i64 {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best as i64
}

fn digits(images: usize, input: &Path, model: &Path, common: &Common) -> Result<(), Error> {
    let cnn = Cnn::load(model)?;
    let names: Vec<String> = (0..64).map(|i| format!("p{i}")).collect();
    let x = read_rows(input, &names, images)?;
    if let Some(v) = x.iter().flatten().find(|&&v| !(0..=16).contains(&v)) {
        return Err(bad(input, format!("pixel {v} is outside 0..=16")));
    }
    let labels = csv_column(input, "label", images);
    let python = csv_column(input, "prediction", images);
    let threads = common.threads.resolve()?;
    let plan = Plan::new(common.family.family, x.iter().flatten().copied())?;
    fn kernel<'p, E: Element<'p>>(p: &'p Program, x: &Tensor<E>, cnn: &Cnn) -> Result<(), Error> {
        cnn.build(p, x)
    }
    let prog = compile(&plan, threads, &[images, 1, 8, 8], &|p, ins| {
        each_family!(ins, kernel, p, &cnn)
    })?;
    if let Some(dir) = &common.export {
        let prog = prog.with_signature(
            &[("images", &[images, 1, 8, 8])],
            &[("logits", &[images, cnn.classes])],
        )?;
        let want: Vec<i64> = x.iter().flat_map(|img| cnn.logits(img)).collect();
        return export(dir, &prog, &[("images", &x.concat())], &[("logits", &want)]);
    }
    let got = execute(&prog, &plan, &x.concat(), common)?;
    println!("| image | label | encrypted prediction | clear prediction | python prediction | logits equal |\n|---|---|---|---|---|---|");
    let mut table = Vec::new();
    let mut exact = true;
    for (i, img) in x.iter().enumerate() {
        let want = cnn.logits(img);
        let ours = &got[i * cnn.classes..(i + 1) * cnn.classes];
        let same = ours == want.as_slice();
        exact &= same;
        let py = python.as_ref().map_or(-1, |p| p[i]);
        exact &= python.is_none() || py == argmax(&want);
        let label = labels.as_ref().map_or(-1, |l| l[i]);
        println!(
            "| {i} | {label} | {} | {} | {py} | {same} |",
            argmax(ours),
            argmax(&want)
        );
        table.push(vec![i as i64, label, argmax(ours), argmax(&want), py]);
    }
    println!(
        "\n{images} images: encrypted logits {} the plain integer model",
        if exact { "equal" } else { "DIFFER FROM" }
    );
    let summary = json!({"images": images, "exact": exact, "pbs": prog.circuit().stats().pbs});
    conclude(
        common,
        exact,
        &["image", "label", "encrypted", "clear", "python"],
        &table,
        summary,
        "logits",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository's data, from the crate's directory.
    fn data(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel)
    }

    #[test]
    fn rust_cnn_equals_the_python_reference_on_every_test_image() {
        let cnn = Cnn::load(&data("data/digits/model.json")).unwrap();
        let names: Vec<String> = (0..64).map(|i| format!("p{i}")).collect();
        let images = read_rows(&data("data/digits/test_images.csv"), &names, 50).unwrap();
        let npy = read_rows(&data("data/digits/test_images.npy"), &names, 50).unwrap();
        assert_eq!(images, npy);
        let lnames: Vec<String> = (0..10).map(|i| format!("l{i}")).collect();
        let logits = read_rows(&data("data/digits/test_logits.csv"), &lnames, 50).unwrap();
        let preds = csv_column(&data("data/digits/test_images.csv"), "prediction", 50).unwrap();
        for (i, img) in images.iter().enumerate() {
            let ours = cnn.logits(img);
            assert_eq!(ours, logits[i], "image {i}");
            assert_eq!(argmax(&ours), preds[i], "image {i}");
        }
    }

    #[test]
    fn rust_regression_equals_the_python_reference_on_every_row() {
        let path = data("data/diabetes/model.json");
        let m = read_json(&path).unwrap();
        let (_, w) = json_ints(&path, field(&path, &m, &["weights"]).unwrap(), "weights").unwrap();
        let bias = m["bias"].as_i64().unwrap();
        let names: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
        let csv = data("data/diabetes/rows.csv");
        let n = read_csv(&csv).unwrap().rows.shape()[0];
        let rows = read_rows(&csv, &names, n).unwrap();
        assert_eq!(
            rows,
            read_rows(&data("data/diabetes/rows.npy"), &names, n).unwrap()
        );
        let expected = csv_column(&data("data/diabetes/expected.csv"), "prediction", n).unwrap();
        for (r, e) in rows.iter().zip(expected) {
            assert_eq!(r.iter().zip(&w).map(|(a, b)| a * b).sum::<i64>() + bias, e);
        }
    }

    #[test]
    fn bad_models_and_inputs_are_typed_errors() {
        let dir = std::env::temp_dir().join(format!("hearth-apps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = dir.join("m.json");
        for text in [
            "{",
            "{\"conv\": {}}",
            "{\"conv\": {\"weights\": [[1, 2], [3]], \"bias\": [1]}}",
        ] {
            std::fs::write(&model, text).unwrap();
            assert!(matches!(Cnn::load(&model), Err(Error::File(_))), "{text}");
        }
        let names = vec!["p0".to_string()];
        assert!(read_rows(&dir.join("missing.csv"), &names, 1).is_err());
        std::fs::write(dir.join("x.csv"), "q0\n1\n").unwrap();
        assert!(matches!(
            read_rows(&dir.join("x.csv"), &names, 1),
            Err(Error::File(_))
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}
