//! `hearth app digits`: a small quantised CNN on encrypted 8x8 digits.

use super::data::{bad, csv_column, field, json_ints, read_json, read_rows};
use super::pipeline::{compile, conclude, each_family, execute, export, Plan};
use super::Common;
use hearth::api::Program;
use hearth::kernels::{self, ConvOrder, Element, Padding, Tensor, Weights};
use hearth::Error;
use num_bigint::BigInt;
use serde_json::json;
use std::path::Path;

/// The quantised CNN of `data/digits/model.json`.
pub(super) struct Cnn {
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

pub(super) fn argmax(v: &[i64]) -> i64 {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best as i64
}

pub(super) fn digits(
    images: usize,
    input: &Path,
    model: &Path,
    common: &Common,
) -> Result<(), Error> {
    let cnn = Cnn::load(model)?;
    let names: Vec<String> = (0..64).map(|i| format!("p{i}")).collect();
    let x = read_rows(input, &names, images)?;
    if let Some(v) = x.iter().flatten().find(|&&v| !(0..=16).contains(&v)) {
        return Err(bad(input, format!("pixel {v} is outside 0..=16")));
    }
    let labels = csv_column(input, "label", images);
    let python = csv_column(input, "prediction", images);
    let plan = Plan::new(common.family.family, x.iter().flatten().copied())?;
    fn kernel<'p, E: Element<'p>>(p: &'p Program, x: &Tensor<E>, cnn: &Cnn) -> Result<(), Error> {
        cnn.build(p, x)
    }
    let prog = compile(
        &plan,
        common.plan_threads(&plan)?,
        &[images, 1, 8, 8],
        &|p, ins| each_family!(ins, kernel, p, &cnn),
    )?;
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
    use crate::app::data::repo_data as data;

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
