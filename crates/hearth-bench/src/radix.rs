//! `hearth bench radix`: issue 9's study on the count backend. The same
//! operations on `Int`'s signed-binary digits (one ciphertext per bit)
//! and on wide redundant digits of radix 4 and 8 (`digits::wide`): #PBS
//! and depth on DIGITS_128, for fresh wide inputs and for inputs grouped
//! from binary digits (heavier: their weights add).

use std::path::PathBuf;

use hearth::digits::wide::{self, Wide};
use hearth::digits::{self, Digits};
use hearth::{CircuitBuilder, Comparison, Error, DIGITS_128};
use serde_json::json;

use crate::report::{emit, Table};

#[derive(Clone, Copy)]
enum Op {
    Add,
    /// `((x + y) + z) + w`: how often unrefreshed digits need refreshing.
    AddChain4,
    Lt,
    Eq,
    ToBinary,
}

impl Op {
    const ALL: [Op; 5] = [Op::Add, Op::AddChain4, Op::Lt, Op::Eq, Op::ToBinary];

    fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::AddChain4 => "((x + y) + z) + w",
            Op::Lt => "lt",
            Op::Eq => "eq",
            Op::ToBinary => "x + y, back to binary digits",
        }
    }
}

/// Where the operands come from.
#[derive(Clone, Copy)]
enum Inputs {
    Binary,
    Wide,
}

fn build(op: Op, bits: usize, k: u32, inputs: Inputs) -> Result<hearth::Circuit, Error> {
    let mut b = CircuitBuilder::new(&DIGITS_128);
    b.set_threads(2);
    if k == 1 {
        let xs: Vec<Digits> = (0..4)
            .map(|_| Digits::input(&mut b, bits))
            .collect::<Result<_, _>>()?;
        match op {
            Op::Add | Op::ToBinary => digits::add(&mut b, &xs[0], &xs[1])?.output(&mut b)?,
            Op::AddChain4 => {
                let s = digits::add(&mut b, &xs[0], &xs[1])?;
                let s = digits::add(&mut b, &s, &xs[2])?;
                digits::add(&mut b, &s, &xs[3])?.output(&mut b)?
            }
            Op::Lt | Op::Eq => {
                let c = if matches!(op, Op::Lt) {
                    Comparison::Lt
                } else {
                    Comparison::Eq
                };
                let w = digits::compare(&mut b, &xs[0], &xs[1], c)?;
                vec![b.output(w)?]
            }
        };
        return Ok(b.build());
    }
    let per = bits.div_ceil(k as usize);
    let xs: Vec<Wide> = (0..4)
        .map(|_| match inputs {
            Inputs::Wide => Wide::input(&mut b, per, k),
            Inputs::Binary => {
                let d = Digits::input(&mut b, bits)?;
                Wide::from_digits(&mut b, &d, k)
            }
        })
        .collect::<Result<_, _>>()?;
    match op {
        Op::Add => wide::add(&mut b, &xs[0], &xs[1])?.output(&mut b)?,
        Op::AddChain4 => {
            let s = wide::add(&mut b, &xs[0], &xs[1])?;
            let s = wide::add(&mut b, &s, &xs[2])?;
            wide::add(&mut b, &s, &xs[3])?.output(&mut b)?
        }
        Op::ToBinary => wide::add(&mut b, &xs[0], &xs[1])?
            .to_digits(&mut b)?
            .output(&mut b)?,
        Op::Lt | Op::Eq => {
            let c = if matches!(op, Op::Lt) {
                Comparison::Lt
            } else {
                Comparison::Eq
            };
            let w = wide::compare(&mut b, &xs[0], &xs[1], c)?;
            vec![b.output(w)?]
        }
    };
    Ok(b.build())
}

pub fn radix(bits: &[usize], json: Option<PathBuf>) -> Result<(), Error> {
    let mut t = Table::new(
        "Radix study on DIGITS_128, count backend: #PBS / depth per operation (`Int` = the \
         signed-binary family as it now is: binary digits between operations, wide groups inside)",
        &[
            "op",
            "bits",
            "Int",
            "radix 4, fresh",
            "radix 4, from binary",
            "radix 8, fresh",
            "radix 8, from binary",
        ],
    );
    let mut rows = Vec::new();
    for &n in bits {
        for op in Op::ALL {
            let mut cells = vec![op.name().to_string(), n.to_string()];
            let mut record = json!({"op": op.name(), "bits": n});
            for (k, inputs, key) in [
                (1, Inputs::Binary, "int"),
                (2, Inputs::Wide, "radix4_fresh"),
                (2, Inputs::Binary, "radix4_binary"),
                (3, Inputs::Wide, "radix8_fresh"),
                (3, Inputs::Binary, "radix8_binary"),
            ] {
                let st = build(op, n, k, inputs)?.stats();
                cells.push(format!("{} / {}", st.pbs, st.depth));
                record[key] = json!({"pbs": st.pbs, "depth": st.depth});
            }
            t.row(cells);
            rows.push(record);
        }
    }
    t.note(
        "Wide digits of radix R = 2^k lie in [-(R-1), R-1]; an addition costs one bootstrap per \
         digit (depth 1) while the tracked weights let its linear digits stand; comparisons add a \
         sign (or zero) test per digit and a tree. `from binary`: operands grouped from \
         signed-binary digits (weight 5 or 21 per digit), as a conversion from today's `Int` would.",
    );
    emit(
        json.as_deref(),
        &json!({"bench": "radix", "params": "DIGITS_128", "rows": rows}),
        &[t],
    )
}
