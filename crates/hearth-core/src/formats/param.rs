//! Named inputs and outputs of a program ([`Param`]): what a bundle's
//! entries and a program's signature are made of, and the check that a
//! list of them covers a program's values.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::crypto::encoding::{within, Shape};
use crate::error::Error;

/// A named input or output of a program: `dims` values of one shape in
/// row-major order (no dims: one value). It groups consecutive inputs or
/// outputs of a `hearth::CompiledProgram`, so a vector, a matrix or a
/// feature map travels in a bundle as one entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Param {
    /// Its name, unique within the inputs (or the outputs).
    pub name: String,
    /// The shape of each value.
    pub shape: Shape,
    /// Tensor dimensions, outermost first; empty for a scalar.
    pub dims: Vec<usize>,
}

impl Param {
    /// A value, or a tensor of values, of `shape`.
    pub fn new(name: impl Into<String>, shape: Shape, dims: &[usize]) -> Self {
        Param {
            name: name.into(),
            shape,
            dims: dims.to_vec(),
        }
    }

    /// How many values: the product of the dims, refused above
    /// [`MAX_VALUES`].
    pub fn count(&self) -> Result<usize, Error> {
        let mut n: u64 = 1;
        for &d in &self.dims {
            n = n.saturating_mul(d as u64);
        }
        within(
            || format!("the values of {}", self.name),
            n,
            MAX_VALUES as u64,
        )?;
        Ok(n as usize)
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.shape)?;
        if !self.dims.is_empty() {
            write!(f, " x {:?}", self.dims)?;
        }
        Ok(())
    }
}

/// Checks that `params` cover `shapes` in order, each group of values one
/// shape, with distinct names; `what` says which side ("input", "output").
pub fn check_cover(params: &[Param], shapes: &[Shape], what: &str) -> Result<(), Error> {
    if let Some(name) = repeated_name(params) {
        return Err(Error::Dimensions(format!("two {what}s are named {name:?}")));
    }
    let mut next = 0usize;
    for p in params {
        let n = p.count()?;
        let Some(group) = shapes.get(next..next.saturating_add(n)) else {
            return Err(Error::Dimensions(format!(
                "{what} {} needs {n} values from {what} {next} on, the program has {}",
                p.name,
                shapes.len()
            )));
        };
        if let Some(s) = group.iter().find(|&&s| s != p.shape) {
            return Err(Error::ShapeMismatch {
                what: format!("{what} {}", p.name),
                expected: p.shape,
                found: *s,
            });
        }
        next += n;
    }
    if next != shapes.len() {
        return Err(Error::Dimensions(format!(
            "the {what}s name {next} values, the program has {}",
            shapes.len()
        )));
    }
    Ok(())
}

/// The params' names, comma-separated (for messages).
pub fn names(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The params `wanted` names, which must be a run of consecutive params in
/// order: what one data owner encrypts of a program's inputs, so that
/// `Bundle::combine` joins the owners' runs into the inputs. Refusals are
/// [`Error::Dimensions`], whose message names the program's inputs.
pub fn run_of<'a>(params: &'a [Param], wanted: &[impl AsRef<str>]) -> Result<&'a [Param], Error> {
    let Some(first) = wanted.first() else {
        return Err(Error::Dimensions("no input named".into()));
    };
    let first = first.as_ref();
    let start = params.iter().position(|p| p.name == first).ok_or_else(|| {
        Error::Dimensions(format!(
            "the program has no input {first} (its inputs: {})",
            names(params)
        ))
    })?;
    params
        .get(start..start + wanted.len())
        .filter(|run| run.iter().zip(wanted).all(|(p, w)| p.name == w.as_ref()))
        .ok_or_else(|| {
            let list: Vec<&str> = wanted.iter().map(AsRef::as_ref).collect();
            Error::Dimensions(format!(
                "[{}]: the inputs must be consecutive and in the program's order ({}), \
                 so that the owners' bundles join in that order",
                list.join(", "),
                names(params)
            ))
        })
}

/// The first name that an earlier param of `params` has too: hashed, so
/// a forged list of a million params costs a million steps, not 10^12.
pub fn repeated_name<'a>(params: impl IntoIterator<Item = &'a Param>) -> Option<&'a str> {
    let mut seen = std::collections::HashSet::new();
    params
        .into_iter()
        .map(|p| p.name.as_str())
        .find(|name| !seen.insert(*name))
}

/// The most values one [`Param`] may hold.
pub const MAX_VALUES: usize = 1 << 24;
