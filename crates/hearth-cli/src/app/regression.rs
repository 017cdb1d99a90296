//! `hearth app regression`: a linear model's predictions on encrypted rows.

use super::data::{bad, csv_column, field, json_ints, read_json, read_rows};
use super::pipeline::{compile, conclude, each_family, execute, export, Plan};
use super::Common;
use hearth::api::Program;
use hearth::kernels::{self, Element, Tensor};
use hearth::Error;
use num_bigint::BigInt;
use serde_json::json;
use std::path::Path;

pub(super) fn regression(
    rows: usize,
    input: &Path,
    model: &Path,
    common: &Common,
) -> Result<(), Error> {
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
    let prog = compile(&plan, common.plan_threads(&plan)?, &[rows, k], &|p, ins| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::data::repo_data as data;
    use hearth::kernels::io::read_csv;

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
}
