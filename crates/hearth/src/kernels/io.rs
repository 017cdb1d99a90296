//! Clear integer tensors from and to files: NPY (NumPy's format, integer
//! dtypes, C order) and CSV (a header line, then rows of integers). Every
//! malformed, truncated or out-of-range file is a [`FileError`] naming the
//! file; nothing panics.

use std::path::{Path, PathBuf};

use super::Tensor;
use crate::error::{Error, FileError};

/// The most elements a file may hold (2^28): larger files are refused.
pub const MAX_ELEMENTS: usize = 1 << 28;

fn malformed(path: &Path, reason: impl Into<String>) -> Error {
    FileError::Malformed {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
    .into()
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| {
        FileError::Io {
            path: path.to_path_buf(),
            source,
        }
        .into()
    })
}

/// Reads an `.npy` file of integers (`i1 i2 i4 i8 u1 u2 u4 u8`, either
/// byte order, C order; `u8` values above `i64::MAX` are refused).
pub fn read_npy(path: impl AsRef<Path>) -> Result<Tensor<i64>, Error> {
    let path = path.as_ref();
    let bytes = read(path)?;
    parse_npy(path, &bytes)
}

fn parse_npy(path: &Path, bytes: &[u8]) -> Result<Tensor<i64>, Error> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(malformed(path, "not an NPY file (bad magic)"));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(malformed(path, format!("NPY version {v} is not supported"))),
    };
    let header = bytes
        .get(start..start.saturating_add(header_len))
        .ok_or_else(|| malformed(path, "truncated header"))?;
    let header = std::str::from_utf8(header).map_err(|_| malformed(path, "header is not text"))?;
    let descr =
        dict_value(header, "descr").ok_or_else(|| malformed(path, "no 'descr' in header"))?;
    let fortran =
        dict_value(header, "fortran_order").ok_or_else(|| malformed(path, "no 'fortran_order'"))?;
    let shape =
        dict_value(header, "shape").ok_or_else(|| malformed(path, "no 'shape' in header"))?;
    if fortran.trim() != "False" {
        return Err(malformed(
            path,
            "Fortran order is not supported (save a C-ordered array)",
        ));
    }
    let descr = descr.trim().trim_matches(|c| c == '\'' || c == '"');
    let (order, kind, size) = {
        let mut ch = descr.chars();
        let order = ch.next().unwrap_or('?');
        let kind = ch.next().unwrap_or('?');
        let size: usize = ch.as_str().parse().unwrap_or(0);
        (order, kind, size)
    };
    if !matches!(kind, 'i' | 'u')
        || !matches!(size, 1 | 2 | 4 | 8)
        || !matches!(order, '<' | '>' | '|' | '=')
    {
        return Err(malformed(
            path,
            format!("dtype {descr} is not an integer type"),
        ));
    }
    let dims: Vec<usize> = shape
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| malformed(path, format!("bad shape entry `{s}`")))
        })
        .collect::<Result<_, _>>()?;
    let count = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&c| c <= MAX_ELEMENTS)
        .ok_or_else(|| {
            malformed(
                path,
                format!("shape {dims:?} is too large (limit {MAX_ELEMENTS} elements)"),
            )
        })?;
    let data = &bytes[start + header_len..];
    if data.len() != count * size {
        return Err(FileError::Truncated {
            path: path.to_path_buf(),
            found: data.len() as u64,
            expected: (count * size) as u64,
        }
        .into());
    }
    let big_endian = order == '>';
    let mut values = Vec::with_capacity(count);
    for chunk in data.chunks_exact(size) {
        let mut buf = [0u8; 8];
        if big_endian {
            buf[8 - size..].copy_from_slice(chunk);
            buf.reverse();
        } else {
            buf[..size].copy_from_slice(chunk);
        }
        let raw = u64::from_le_bytes(buf);
        let v = if kind == 'i' {
            let shift = 64 - 8 * size as u32;
            ((raw << shift) as i64) >> shift
        } else {
            i64::try_from(raw)
                .map_err(|_| malformed(path, format!("value {raw} does not fit i64")))?
        };
        values.push(v);
    }
    Tensor::new(&dims, values)
}

/// The text of `key`'s value in a Python dict literal (NPY header).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))?;
    let rest = header[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?;
    let end = if rest.trim_start().starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}'])?
    };
    Some(&rest[..end])
}

/// Writes `t` as an `.npy` file of little-endian `i64`.
pub fn write_npy(path: impl AsRef<Path>, t: &Tensor<i64>) -> Result<(), Error> {
    let path = path.as_ref();
    let shape = match t.shape() {
        [n] => format!("({n},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '<i8', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in t.data() {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    write(path, &bytes)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    std::fs::write(path, bytes).map_err(|source| {
        FileError::Io {
            path: PathBuf::from(path),
            source,
        }
        .into()
    })
}

/// A CSV table of integers: its header and its rows as a `[rows, columns]`
/// tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvTable {
    /// Column names from the header line.
    pub header: Vec<String>,
    /// The rows, `[rows, columns]`.
    pub rows: Tensor<i64>,
}

impl CsvTable {
    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

/// Reads a CSV file: one header line, then rows of integers, every row as
/// long as the header (blank lines are skipped).
pub fn read_csv(path: impl AsRef<Path>) -> Result<CsvTable, Error> {
    let path = path.as_ref();
    let bytes = read(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| malformed(path, "not UTF-8 text"))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, head) = lines
        .next()
        .ok_or_else(|| malformed(path, "empty file (no header)"))?;
    let header: Vec<String> = head.split(',').map(|h| h.trim().to_string()).collect();
    let mut data = Vec::new();
    let mut rows = 0usize;
    for (i, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != header.len() {
            return Err(malformed(
                path,
                format!(
                    "line {}: {} fields, the header has {}",
                    i + 1,
                    cells.len(),
                    header.len()
                ),
            ));
        }
        for c in cells {
            data.push(c.parse::<i64>().map_err(|_| {
                malformed(path, format!("line {}: `{c}` is not an integer", i + 1))
            })?);
        }
        rows += 1;
        if data.len() > MAX_ELEMENTS {
            return Err(malformed(path, format!("more than {MAX_ELEMENTS} values")));
        }
    }
    Ok(CsvTable {
        rows: Tensor::new(&[rows, header.len()], data)?,
        header,
    })
}

/// Writes a CSV file: `header`, then one line per row of `rows` (any
/// displayable cells).
pub fn write_csv<T: std::fmt::Display>(
    path: impl AsRef<Path>,
    header: &[&str],
    rows: &[Vec<T>],
) -> Result<(), Error> {
    let mut text = header.join(",");
    text.push('\n');
    for r in rows {
        text.push_str(
            &r.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
        text.push('\n');
    }
    write(path.as_ref(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("hearth-io-{}-{name}", std::process::id()))
    }

    #[test]
    fn npy_round_trips_and_refuses_damage() {
        let t = Tensor::new(&[2, 3], vec![1, -2, 3, i64::MIN, 0, i64::MAX]).unwrap();
        let p = tmp("a.npy");
        write_npy(&p, &t).unwrap();
        assert_eq!(read_npy(&p).unwrap(), t);
        let bytes = std::fs::read(&p).unwrap();
        // Truncated payload, cut header, bad magic: typed errors.
        for cut in [bytes.len() - 3, 40, 5] {
            let e = parse_npy(&p, &bytes[..cut]).unwrap_err();
            assert!(matches!(e, Error::File(_)), "{e}");
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(parse_npy(&p, &bad).is_err());
        let float = String::from_utf8_lossy(&bytes).replace("<i8", "<f8");
        assert!(parse_npy(&p, float.as_bytes()).is_err());
        std::fs::remove_file(p).ok();
    }

    #[test]
    fn npy_reads_narrow_and_big_endian_integers() {
        let header = |d: &str| {
            let mut h = format!("{{'descr': '{d}', 'fortran_order': False, 'shape': (3,), }}");
            while (10 + h.len() + 1) % 16 != 0 {
                h.push(' ');
            }
            h.push('\n');
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
            b.extend_from_slice(h.as_bytes());
            b
        };
        let mut b = header("|i1");
        b.extend_from_slice(&[0xff, 0x05, 0x80]);
        assert_eq!(
            parse_npy(Path::new("x"), &b).unwrap().data(),
            &[-1, 5, -128]
        );
        let mut b = header(">u2");
        b.extend_from_slice(&[0x01, 0x00, 0xff, 0xff, 0x00, 0x02]);
        assert_eq!(
            parse_npy(Path::new("x"), &b).unwrap().data(),
            &[256, 65535, 2]
        );
    }

    #[test]
    fn csv_reads_and_refuses_bad_rows() {
        let p = tmp("a.csv");
        write_csv(&p, &["a", "b"], &[vec![1, -2], vec![3, 4]]).unwrap();
        let t = read_csv(&p).unwrap();
        assert_eq!(t.header, ["a", "b"]);
        assert_eq!(t.rows.shape(), [2, 2]);
        assert_eq!(t.rows.data(), &[1, -2, 3, 4]);
        std::fs::write(&p, "a,b\n1,2\n3\n").unwrap();
        assert!(matches!(read_csv(&p), Err(Error::File(_))));
        std::fs::write(&p, "a,b\n1,x\n").unwrap();
        assert!(matches!(read_csv(&p), Err(Error::File(_))));
        std::fs::write(&p, "").unwrap();
        assert!(matches!(read_csv(&p), Err(Error::File(_))));
        std::fs::remove_file(&p).ok();
        assert!(matches!(read_csv(&p), Err(Error::File(_))));
    }
}
