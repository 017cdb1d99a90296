//! Reading the applications' data and models (JSON, CSV, NPY), every
//! failure a typed error naming the file.

use hearth::kernels::io::{read_csv, read_npy};
use hearth::{Error, FileError};
use serde_json::Value;
use std::path::Path;

pub(super) fn bad(path: &Path, reason: impl Into<String>) -> Error {
    FileError::Malformed {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
    .into()
}

pub(super) fn read_json(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| bad(path, e.to_string()))
}

/// The integers of a (nested) JSON array, flattened, with its shape.
pub(super) fn json_ints(
    path: &Path,
    v: &Value,
    what: &str,
) -> Result<(Vec<usize>, Vec<i64>), Error> {
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

pub(super) fn field<'a>(path: &Path, v: &'a Value, keys: &[&str]) -> Result<&'a Value, Error> {
    keys.iter()
        .try_fold(v, |v, k| v.get(k))
        .ok_or_else(|| bad(path, format!("no `{}`", keys.join("."))))
}

/// Rows of `columns` from a CSV (by name) or an NPY (reshaped to `[n,
/// columns.len()]`), the first `n`.
pub(super) fn read_rows(path: &Path, columns: &[String], n: usize) -> Result<Vec<Vec<i64>>, Error> {
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
pub(super) fn csv_column(path: &Path, name: &str, n: usize) -> Option<Vec<i64>> {
    if path.extension().is_some_and(|e| e == "npy") {
        return None;
    }
    read_rows(path, &[name.to_string()], n)
        .ok()
        .map(|r| r.into_iter().map(|v| v[0]).collect())
}

/// The repository's data, from the crate's directory (for tests).
#[cfg(test)]
pub(super) fn repo_data(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}
