//! Clear values in and out of bundles: JSON (one object, a nested array
//! per name), NPY (one `int64` array per name) and CSV (one table of
//! integers per name, its header skipped).
//!
//! Values beyond `i64` travel as decimal strings in JSON; NPY and CSV
//! hold `i64` only, so a wider result is refused there with a typed
//! error that points at JSON.

use std::path::{Path, PathBuf};

use hearth::kernels::io::{read_csv, read_npy, write_csv, write_npy};
use hearth::kernels::Tensor;
use hearth::{Error, FileError, Param};
use num_bigint::BigInt;
use serde_json::Value;

/// The largest JSON input read (bytes).
const MAX_JSON: u64 = 1 << 30;

fn bad(path: &Path, reason: impl Into<String>) -> Error {
    FileError::Malformed {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
    .into()
}

/// Reads the values of every param: `json` holds any of them by name,
/// `files` (`NAME=FILE.npy|csv|json|bin`) one each; every param must be given
/// exactly once.
pub fn read_inputs(
    params: &[Param],
    json: Option<&Path>,
    files: &[(String, PathBuf)],
) -> Result<Vec<Vec<BigInt>>, Error> {
    let object = match json {
        Some(path) => Some(read_json(path)?),
        None => None,
    };
    for (name, _) in files {
        if !params.iter().any(|p| &p.name == name) {
            return Err(Error::Config(format!(
                "--input {name}=...: the program has no input {name} (it takes {})",
                names(params)
            )));
        }
    }
    params
        .iter()
        .map(|p| {
            let file = files.iter().find(|(n, _)| n == &p.name);
            let in_json = object
                .as_ref()
                .and_then(|(path, o)| Some((path, o.get(&p.name)?)));
            match (file, in_json) {
                (Some(_), Some(_)) => Err(Error::Config(format!(
                    "input {} is given twice (--values and --input)",
                    p.name
                ))),
                (Some((_, path)), None) => read_file(path, p),
                (None, Some((path, v))) => from_json(path, v, p),
                (None, None) => Err(Error::Config(format!(
                    "no value for input {} ({p}); give it in --values or --input {}=FILE",
                    p.name, p.name
                ))),
            }
        })
        .collect()
}

fn names(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn read_json(path: &Path) -> Result<(PathBuf, serde_json::Map<String, Value>), Error> {
    let len = std::fs::metadata(path)
        .map_err(|source| FileError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if len > MAX_JSON {
        return Err(bad(path, format!("{len} bytes, over {MAX_JSON}")));
    }
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    match serde_json::from_str(&text).map_err(|e| bad(path, e.to_string()))? {
        Value::Object(o) => Ok((path.to_path_buf(), o)),
        _ => Err(bad(path, "expected an object of named values")),
    }
}

/// One param's values from a file, by extension.
fn read_file(path: &Path, p: &Param) -> Result<Vec<BigInt>, Error> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tensor = match ext {
        "npy" => read_npy(path)?,
        "csv" => read_csv(path)?.rows,
        "json" => {
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(path).map_err(|source| {
                    FileError::Io {
                        path: path.to_path_buf(),
                        source,
                    }
                })?)
                .map_err(|e| bad(path, e.to_string()))?;
            return from_json(path, &v, p);
        }
        "bin" => return read_bin(path, p),
        _ => {
            return Err(bad(
                path,
                "values are read from .json, .npy, .csv or .bin files",
            ))
        }
    };
    let n = p.count()?;
    // NPY keeps its dims (a 1 x n CSV table fits dims [n], and so on).
    if tensor.len() != n || (ext == "npy" && tensor.shape() != p.dims.as_slice() && n != 1) {
        return Err(Error::Dimensions(format!(
            "{}: dims {:?}, input {} needs {:?}",
            path.display(),
            tensor.shape(),
            p.name,
            p.dims
        )));
    }
    Ok(tensor.data().iter().map(|&v| BigInt::from(v)).collect())
}

/// Raw bytes: each value of `p` in its shape's bytes, little-endian (a
/// `u8` per byte; a `Word<128>` in 16), as sealed bytes are kept.
fn read_bin(path: &Path, p: &Param) -> Result<Vec<BigInt>, Error> {
    let width = hearth::formats::clear::value_width(p.shape);
    let want = p.count()?.saturating_mul(width);
    let io = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len != want as u64 {
        return Err(Error::Dimensions(format!(
            "{}: {len} bytes, input {} ({p}) takes {want} ({width} per value)",
            path.display(),
            p.name
        )));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    hearth::formats::clear::values_from_bytes(p, &bytes)
}

/// A nested JSON array of exactly `p.dims` (a number for a scalar),
/// row-major.
fn from_json(path: &Path, v: &Value, p: &Param) -> Result<Vec<BigInt>, Error> {
    fn walk(v: &Value, dims: &[usize], out: &mut Vec<BigInt>) -> Result<(), String> {
        match dims.split_first() {
            None => out.push(number(v)?),
            Some((&d, rest)) => {
                let Value::Array(items) = v else {
                    return Err(format!("expected an array of {d}, found {v}"));
                };
                if items.len() != d {
                    return Err(format!("an array of {} where {d} are needed", items.len()));
                }
                for item in items {
                    walk(item, rest, out)?;
                }
            }
        }
        Ok(())
    }
    let mut out = Vec::with_capacity(p.count()?);
    walk(v, &p.dims, &mut out)
        .map_err(|e| bad(path, format!("{} (dims {:?}): {e}", p.name, p.dims)))?;
    Ok(out)
}

fn number(v: &Value) -> Result<BigInt, String> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(BigInt::from)
            .or_else(|| n.as_u64().map(BigInt::from))
            .ok_or_else(|| format!("{n} is not an integer")),
        Value::String(s) => s
            .parse::<BigInt>()
            .map_err(|_| format!("{s:?} is not a decimal integer")),
        Value::Bool(b) => Ok(BigInt::from(*b as u8)),
        other => Err(format!("{other} is not an integer")),
    }
}

/// A value as JSON: a number when it fits `i64` or `u64`, else a string.
fn to_json(v: &BigInt) -> Value {
    i64::try_from(v)
        .map(Value::from)
        .or_else(|_| u64::try_from(v).map(Value::from))
        .unwrap_or_else(|_| Value::String(v.to_string()))
}

/// Nested arrays of `dims` over row-major `values`.
fn nest(values: &[BigInt], dims: &[usize]) -> Value {
    match dims.split_first() {
        None => values.first().map_or(Value::Null, to_json),
        Some((&d, rest)) => {
            let step = rest.iter().product::<usize>();
            Value::Array(
                (0..d)
                    .map(|i| nest(&values[i * step..(i + 1) * step], rest))
                    .collect(),
            )
        }
    }
}

/// The decrypted entries as one JSON object, by name.
pub fn to_json_object(entries: &[(Param, Vec<BigInt>)]) -> Value {
    Value::Object(
        entries
            .iter()
            .map(|(p, vs)| (p.name.clone(), nest(vs, &p.dims)))
            .collect(),
    )
}

/// Writes the entries to `path` as one pretty JSON object, by name.
pub fn write_json(path: &Path, entries: &[(Param, Vec<BigInt>)]) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(&to_json_object(entries))
        .map_err(|e| Error::Config(e.to_string()))?;
    std::fs::write(path, text + "\n").map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(())
}

/// Writes each entry to `dir/NAME.npy` or `dir/NAME.csv` (`i64` values
/// only); returns the files written.
pub fn write_tables(
    dir: &Path,
    ext: &str,
    entries: &[(Param, Vec<BigInt>)],
) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for (p, vs) in entries {
        let ints = vs
            .iter()
            .map(|v| {
                i64::try_from(v).map_err(|_| Error::DoesNotFit {
                    value: v.to_string(),
                    target: format!("an i64 of {} ({ext} holds i64; use JSON)", p.name),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let path = dir.join(format!("{}.{ext}", p.name));
        if ext == "npy" {
            write_npy(&path, &Tensor::new(&p.dims, ints)?)?;
        } else {
            // Rows of the last dim (one row for a scalar or a vector).
            let cols = p.dims.last().copied().unwrap_or(1).max(1);
            let header: Vec<String> = (0..cols).map(|j| format!("c{j}")).collect();
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let rows: Vec<Vec<i64>> = ints.chunks(cols).map(<[i64]>::to_vec).collect();
            write_csv(&path, &header, &rows)?;
        }
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::Shape;

    #[test]
    fn json_round_trips_nested_and_big_values() {
        let p = Param::new("x", Shape::Int { digits: 80 }, &[2, 2]);
        let vals: Vec<BigInt> = vec![
            1.into(),
            (-5).into(),
            BigInt::from(u64::MAX),
            BigInt::from(u64::MAX) * BigInt::from(7),
        ];
        let j = to_json_object(&[(p.clone(), vals.clone())]);
        assert_eq!(
            j["x"][1][1],
            Value::String((BigInt::from(u64::MAX) * BigInt::from(7)).to_string())
        );
        let back = from_json(Path::new("t"), &j["x"], &p).unwrap();
        assert_eq!(back, vals);
        // Wrong dims and non-integers are refused.
        let q = Param::new("x", Shape::Int { digits: 80 }, &[4]);
        assert!(from_json(Path::new("t"), &j["x"], &q).is_err());
        assert!(from_json(
            Path::new("t"),
            &serde_json::json!([1.5, 2]),
            &Param::new("y", Shape::Int { digits: 4 }, &[2])
        )
        .is_err());
        let s = Param::new("s", Shape::Int { digits: 4 }, &[]);
        assert_eq!(
            from_json(Path::new("t"), &serde_json::json!(-3), &s).unwrap(),
            vec![BigInt::from(-3)]
        );
    }
}
