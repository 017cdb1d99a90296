//! Benchmark output: markdown tables and JSON.

use std::path::{Path, PathBuf};

use hearth::Error;

/// `--json FILE`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct JsonOut {
    /// Also write the results as JSON to FILE (default: none; `-`: JSON on
    /// stdout, the tables on stderr).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// A markdown table.
pub struct Table {
    title: String,
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    note: Option<String>,
}

impl Table {
    /// An empty table under `title` with these column headers.
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Self {
        Table {
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            note: None,
        }
    }

    /// A line printed under the table.
    pub fn note(&mut self, text: &str) {
        self.note = Some(text.to_string());
    }

    /// Adds a row of cells.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn render(&self) -> String {
        let mut s = format!("### {}\n\n| {} |\n|", self.title, self.headers.join(" | "));
        s.push_str(&"---|".repeat(self.headers.len()));
        s.push('\n');
        for r in &self.rows {
            s.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        if let Some(n) = &self.note {
            s.push_str(&format!("\n{n}\n"));
        }
        s
    }
}

/// The tables as markdown, one after another.
pub fn markdown(tables: &[Table]) -> String {
    tables.iter().map(|t| t.render() + "\n").collect()
}

/// Prints the tables (to stdout, or stderr when JSON goes to stdout) and
/// writes `json` to `path` (`-` for stdout).
pub fn emit(path: Option<&Path>, json: &serde_json::Value, tables: &[Table]) -> Result<(), Error> {
    let text = markdown(tables);
    let pretty = serde_json::to_string_pretty(&with_build(json)).expect("JSON values serialize");
    match path {
        Some(p) if p == Path::new("-") => {
            eprint!("{text}");
            println!("{pretty}");
        }
        Some(p) => {
            print!("{text}");
            std::fs::write(p, pretty + "\n").map_err(|source| hearth::FileError::Io {
                path: p.to_path_buf(),
                source,
            })?;
            eprintln!("JSON written to {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Prints the tables and writes them into the folder `dir` (made if
/// missing) as `STEM.md`, under `preamble`, and `json` as `STEM.json`:
/// the benchmarks whose results are kept as files (`--out DIR`).
pub fn write_out(
    dir: &Path,
    stem: &str,
    preamble: &str,
    json: &serde_json::Value,
    tables: &[Table],
) -> Result<(), Error> {
    let io = |path: PathBuf| move |source| hearth::FileError::Io { path, source };
    std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
    let text = markdown(tables);
    print!("{text}");
    let md = dir.join(format!("{stem}.md"));
    std::fs::write(&md, format!("{preamble}\n{text}")).map_err(io(md.clone()))?;
    let js = dir.join(format!("{stem}.json"));
    let pretty = serde_json::to_string_pretty(&with_build(json)).expect("JSON values serialize");
    std::fs::write(&js, pretty + "\n").map_err(io(js.clone()))?;
    eprintln!("written: {} and {}", md.display(), js.display());
    Ok(())
}

/// `json` with the build it came from (`"build": {"opt_level": ..}`) when
/// it is an object: a reader can tell a timing run (`cargo timing`, level
/// 3) from the test command's build.
fn with_build(json: &serde_json::Value) -> serde_json::Value {
    let mut json = json.clone();
    if let Some(map) = json.as_object_mut() {
        map.entry("build")
            .or_insert_with(|| serde_json::json!({ "opt_level": crate::tfhe::OPT_LEVEL }));
    }
    json
}

/// Milliseconds with two decimals.
pub fn ms(d: std::time::Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// The median of `samples` (the upper one of an even count); zero for none.
pub fn median(mut samples: Vec<std::time::Duration>) -> std::time::Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Runs `f` in a fresh temporary folder named for `name` and this
/// process, removed afterwards whatever `f` returned.
pub fn in_temp_dir<T>(name: &str, f: impl FnOnce(&Path) -> Result<T, Error>) -> Result<T, Error> {
    let root = std::env::temp_dir().join(format!("hearth-bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&root)
        .map_err(|e| Error::Config(format!("{}: {e}", root.display())))?;
    let outcome = f(&root);
    let _ = std::fs::remove_dir_all(&root);
    outcome
}
