//! The README's and the book's shell blocks as a user pastes them: every
//! ```` ```sh ```` block of a document runs in order, under `bash -e`, in
//! one fresh folder per document (with `data/` and `examples/` beside it),
//! with this build's `hearth` first on `PATH`.
//!
//! The documents: the README and every `.md` under `docs/` (tutorials and
//! reference included), except the measured output under `docs/results/`
//! other than the topic pages that `docs/SUMMARY.md` lists.
//!
//! Markers, all invisible to readers:
//! * `<!-- not run by the tests: WHY -->` on the line right before a
//!   block's opening fence: the block is not run (`sh` and `python` only),
//!   and says why.
//! * `<!-- file: NAME -->` on the line right before a fence: the block is
//!   saved as `NAME` in the document's folder before the blocks after it
//!   run (the C source of a tutorial, say).
//! * In `sh` and `python` blocks, a line starting with `~` is hidden by
//!   mdBook (`docs/book.toml`); the tests strip the `~` and run the line
//!   (scaffolding: waiting for a server, a check the reader does not need).
//!
//! A document whose blocks need tools that may be missing (the ARM
//! tutorial: `arm-none-eabi-gcc` and `qemu-arm`) is skipped, saying so,
//! without them, unless `HEARTH_REQUIRE_ARM_TOOLS` is set.
//!
//! The Rust blocks are the doctests of `crates/hearth-book` and the
//! Python blocks run in `crates/hearth-py/tests/test_docs.py`; this file
//! also counts them all (`--nocapture` prints the table, with the blocks
//! executed against those that exist) and checks that every block names
//! its language, so that none is skipped unseen.

use std::path::{Path, PathBuf};
use std::process::Command;

const NOT_RUN: &str = "<!-- not run by the tests:";
const FILE: &str = "<!-- file:";
const OLD_NOT_RUN: &str = "# not run by the tests:";

/// Languages a block may name: those that run (`rust` as doctests,
/// `python`, `sh`) and those that are shown only.
const LANGUAGES: &[&str] = &[
    "rust",
    "python",
    "sh",
    "text",
    "toml",
    "json",
    "c",
    "armasm",
    "javascript",
];

/// Documents whose blocks need tools beyond the build: the tools, and the
/// variable that makes their absence a failure.
const NEEDS: &[(&str, &[&str], &str)] = &[(
    "docs/tutorials/arm.md",
    &["arm-none-eabi-gcc", "qemu-arm"],
    "HEARTH_REQUIRE_ARM_TOOLS",
)];

/// A fenced code block: the file, its first line (1-based), the info
/// string, the code (the fence's indentation removed) and its markers.
struct Block {
    file: String,
    line: usize,
    lang: String,
    code: String,
    /// Why it is not run (`<!-- not run by the tests: WHY -->`).
    not_run: Option<String>,
    /// The file it is saved as (`<!-- file: NAME -->`).
    save_as: Option<String>,
}

impl Block {
    /// The code as the tests run it: hidden lines (`~`) shown.
    fn runnable(&self) -> String {
        self.code
            .lines()
            .map(|l| {
                let t = l.trim_start();
                match t.strip_prefix('~') {
                    Some(rest) if matches!(self.lang.as_str(), "sh" | "python") => {
                        format!("{}{rest}", &l[..l.len() - t.len()])
                    }
                    _ => l.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn md_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            md_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// The README and the book's pages (`docs/**/*.md`, without the measured
/// output in `docs/results/` beyond the topic pages SUMMARY.md lists),
/// README first.
fn documents() -> Vec<PathBuf> {
    let docs = root().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let mut files = Vec::new();
    md_files(&docs, &mut files);
    files.retain(|p| {
        let rel = p
            .strip_prefix(&docs)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        !rel.starts_with("results/") || summary.contains(&format!("({rel})"))
    });
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

/// `path` relative to the repository's root.
fn relative(path: &Path) -> String {
    let root = root().canonicalize().unwrap();
    let path = path.canonicalize().unwrap();
    path.strip_prefix(&root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// The value of a `<!-- PREFIX VALUE -->` marker line, if it is one.
fn marker<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.trim().strip_prefix(prefix)?;
    Some(rest.strip_suffix("-->").unwrap_or(rest).trim())
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = relative(path);
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let indent = lines[i].len() - trimmed.len();
        if let Some(info) = trimmed.strip_prefix("```") {
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                end += 1;
            }
            assert!(end < lines.len(), "{file}:{start}: unclosed code block");
            let before = if i > 0 { lines[i - 1] } else { "" };
            let code: Vec<&str> = lines[start..end]
                .iter()
                .map(|l| {
                    let pad = l.len() - l.trim_start().len();
                    &l[pad.min(indent)..]
                })
                .collect();
            found.push(Block {
                file: file.clone(),
                line: start,
                lang: info.split([',', ' ']).next().unwrap_or("").to_string(),
                code: code.join("\n"),
                not_run: marker(before, NOT_RUN).map(str::to_string),
                save_as: marker(before, FILE).map(str::to_string),
            });
            i = end;
        } else {
            for m in [NOT_RUN, FILE] {
                let next_is_fence = lines
                    .get(i + 1)
                    .is_some_and(|l| l.trim_start().starts_with("```"));
                assert!(
                    marker(lines[i], m).is_none() || next_is_fence,
                    "{file}:{}: `{m} ... -->` belongs on the line right before a code block's opening fence",
                    i + 1
                );
            }
        }
        i += 1;
    }
    found
}

/// The tools a document needs that are missing here, and the variable
/// that requires them.
fn missing_tools(doc: &Path) -> Option<(Vec<&'static str>, &'static str)> {
    let rel = relative(doc);
    let (_, tools, require) = NEEDS.iter().find(|(d, _, _)| *d == rel)?;
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| {
            !Command::new(t)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect();
    (!missing.is_empty()).then_some((missing, *require))
}

#[test]
fn every_block_names_its_language_and_every_skip_says_why() {
    let mut rows = Vec::new();
    for doc in documents() {
        for b in blocks(&doc) {
            // rustdoc compiles an unnamed block as Rust: name it.
            assert!(
                LANGUAGES.contains(&b.lang.as_str()),
                "{}:{}: a code block needs its language ({}), found `{}`",
                b.file,
                b.line,
                LANGUAGES.join(", "),
                b.lang
            );
            assert!(
                !b.code.trim_start().starts_with(OLD_NOT_RUN),
                "{}:{}: the marker is now `<!-- not run by the tests: WHY -->` on the line before the fence",
                b.file,
                b.line
            );
            if let Some(why) = &b.not_run {
                assert!(
                    b.lang == "sh" || b.lang == "python",
                    "{}:{}: only sh and python blocks may be left out",
                    b.file,
                    b.line
                );
                assert!(
                    !why.is_empty(),
                    "{}:{}: say why it is not run",
                    b.file,
                    b.line
                );
            }
            // A Rust block is a doctest: no `ignore` or `no_run` escape.
            assert!(
                !(b.lang == "rust" && b.code.is_empty()),
                "{}:{}: empty Rust block",
                b.file,
                b.line
            );
            rows.push(b);
        }
    }
    let count = |lang: &str, run: bool| {
        rows.iter()
            .filter(|b| b.lang == lang && b.not_run.is_none() == run)
            .count()
    };
    println!("| language | blocks | run by the test command | not run (each says why) |");
    println!("|---|---|---|---|");
    let (mut run, mut all) = (0, 0);
    for lang in ["rust", "python", "sh"] {
        let (r, skipped) = (count(lang, true), count(lang, false));
        println!("| {lang} | {} | {r} | {skipped} |", r + skipped);
        (run, all) = (run + r, all + r + skipped);
    }
    let shown = rows.len() - all;
    println!(
        "executed: {run} of {all} code blocks (rust, python, sh) in {} documents; \
         {shown} more blocks are shown only (text, toml, json, c, armasm)",
        documents().len()
    );
    for doc in documents() {
        if let Some((missing, _)) = missing_tools(&doc) {
            println!(
                "{}: its sh blocks are skipped here: {} missing",
                relative(&doc),
                missing.join(", ")
            );
        }
    }
    assert!(count("rust", true) >= 8 && count("python", true) >= 2 && count("sh", true) >= 3);
}

/// Every `rust` block's info string is plain `rust`: no `ignore`,
/// `no_run` or `should_panic` that would let a block go stale.
#[test]
fn rust_blocks_are_plain_doctests() {
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(info) = line.trim_start().strip_prefix("```rust") {
                assert!(
                    info.trim().is_empty(),
                    "{}:{}: ```rust{info}",
                    doc.display(),
                    n + 1
                );
            }
        }
    }
}

/// The markers' rules: a hidden line is stripped of its `~` and keeps its
/// indentation; markers are read from the line before the fence.
/// A block that shows a source file (`<!-- shows PATH -->` before it) is
/// that file, byte for byte: code too slow for the test command (the
/// sensor tutorial's encrypted run) lives in a file the build compiles,
/// and the page cannot drift from it.
#[test]
fn shown_files_are_the_files() {
    let mut shown = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some(path) = line
                .trim()
                .strip_prefix("<!-- shows ")
                .and_then(|r| r.strip_suffix(" -->"))
            else {
                continue;
            };
            let fence = lines.next().unwrap_or_default();
            assert!(fence.starts_with("```"), "{}: {path}", relative(&doc));
            let body: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with("```"))
                .collect();
            let file = std::fs::read_to_string(root().join(path)).unwrap();
            assert_eq!(
                body.join("\n") + "\n",
                file,
                "{} shows {path}, which has changed: copy it again",
                relative(&doc)
            );
            shown += 1;
        }
    }
    assert!(shown >= 1);
}

#[test]
fn markers_are_read() {
    let dir = std::env::temp_dir().join(format!("hearth-docs-markers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("page.md");
    std::fs::write(
        &page,
        "text\n<!-- not run by the tests: too slow -->\n```sh\nsleep 1000\n```\n\
         <!-- file: a.c -->\n```c\nint x;\n```\n\
         - item\n\n  ```python\n  ~import os\n  if True:\n    ~  x = 1\n  ```\n",
    )
    .unwrap();
    let b = blocks(&page);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(b.len(), 3);
    assert_eq!(b[0].not_run.as_deref(), Some("too slow"));
    assert_eq!(b[1].save_as.as_deref(), Some("a.c"));
    assert_eq!(
        (b[1].not_run.as_deref(), b[0].save_as.as_deref()),
        (None, None)
    );
    assert_eq!(b[2].lang, "python");
    assert_eq!(b[2].code, "~import os\nif True:\n  ~  x = 1");
    assert_eq!(b[2].runnable(), "import os\nif True:\n    x = 1");
}

#[test]
fn shell_blocks_run() {
    let bin = Path::new(env!("CARGO_BIN_EXE_hearth"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for doc in documents() {
        let all = blocks(&doc);
        if !all.iter().any(|b| b.lang == "sh" && b.not_run.is_none()) {
            continue;
        }
        if let Some((missing, require)) = missing_tools(&doc) {
            assert!(
                std::env::var_os(require).is_none(),
                "{}: {} required ({require} is set) but missing",
                relative(&doc),
                missing.join(", ")
            );
            eprintln!(
                "{}: skipped: {} missing (Debian: gcc-arm-none-eabi, qemu-user)",
                relative(&doc),
                missing.join(", ")
            );
            continue;
        }
        let name = relative(&doc).replace(['/', '.'], "-");
        let dir = std::env::temp_dir().join(format!("hearth-docs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for shared in ["data", "examples"] {
            std::os::unix::fs::symlink(root().join(shared), dir.join(shared)).unwrap();
        }
        for b in all {
            if let Some(name) = &b.save_as {
                std::fs::write(dir.join(name), format!("{}\n", b.code)).unwrap();
            }
            if b.lang != "sh" || b.not_run.is_some() {
                continue;
            }
            let code = b.runnable();
            // `set -m`: a server started with `&` gets its own process
            // group, so that `kill %1` reaches it.
            let script = format!("set -euo pipefail\nset -m\n{code}\nwait\n");
            let started = std::time::Instant::now();
            let out = Command::new("timeout")
                .args(["300", "bash", "-c", &script])
                .current_dir(&dir)
                .env("PATH", &path)
                .env("HEARTH_THREADS", "2")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}:{}: the block failed\n--- block\n{code}\n--- stdout\n{}\n--- stderr\n{}",
                b.file,
                b.line,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!(
                "{}:{}: ran in {:.1} s",
                b.file,
                b.line,
                started.elapsed().as_secs_f64()
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
