//! The README's and the book's shell blocks as a user pastes them: every
//! ```` ```sh ```` block of a document runs in order, under `bash -e`, in
//! one fresh folder per document (with `data/` and `examples/` beside it),
//! with this build's `hearth` first on `PATH`. A block that cannot run
//! here starts with `# not run by the tests: WHY`, and says why.
//!
//! The Rust blocks are the doctests of `crates/hearth-book` and the
//! Python blocks run in `crates/hearth-py/tests/test_docs.py`; this file
//! also counts them all (`--nocapture` prints the table) and checks that
//! every block names its language, so that none is skipped unseen.

use std::path::{Path, PathBuf};
use std::process::Command;

const NOT_RUN: &str = "# not run by the tests:";

/// A fenced code block: the file, its first line (1-based), the info
/// string and the code.
struct Block {
    file: String,
    line: usize,
    lang: String,
    code: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README and the book's chapters (`docs/*.md`), README first.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(info) = lines[i].strip_prefix("```") {
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].starts_with("```") {
                end += 1;
            }
            assert!(end < lines.len(), "{file}:{start}: unclosed code block");
            found.push(Block {
                file: file.clone(),
                line: start,
                lang: info.split([',', ' ']).next().unwrap_or("").to_string(),
                code: lines[start..end].join("\n"),
            });
            i = end;
        }
        i += 1;
    }
    found
}

/// Why a block is not run, if it says so.
fn not_run(block: &Block) -> Option<&str> {
    block
        .code
        .lines()
        .next()?
        .strip_prefix(NOT_RUN)
        .map(str::trim)
}

#[test]
fn every_block_names_its_language_and_every_skip_says_why() {
    let mut rows = Vec::new();
    for doc in documents() {
        for b in blocks(&doc) {
            // rustdoc compiles an unnamed block as Rust: name it.
            assert!(
                ["rust", "python", "sh", "text", "toml", "json"].contains(&b.lang.as_str()),
                "{}:{}: a code block needs its language (rust, python, sh, text, ...), found `{}`",
                b.file,
                b.line,
                b.lang
            );
            if let Some(why) = not_run(&b) {
                assert!(
                    b.lang == "sh" || b.lang == "python",
                    "{}:{}",
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
            .filter(|b| b.lang == lang && not_run(b).is_none() == run)
            .count()
    };
    println!("| language | blocks | run by the test command | not run (each says why) |");
    println!("|---|---|---|---|");
    for lang in ["rust", "python", "sh"] {
        let (run, skipped) = (count(lang, true), count(lang, false));
        println!("| {lang} | {} | {run} | {skipped} |", run + skipped);
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
            if let Some(info) = line.strip_prefix("```rust") {
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
        let runnable: Vec<Block> = blocks(&doc)
            .into_iter()
            .filter(|b| b.lang == "sh" && not_run(b).is_none())
            .collect();
        if runnable.is_empty() {
            continue;
        }
        let name = doc.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = std::env::temp_dir().join(format!("hearth-docs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for shared in ["data", "examples"] {
            std::os::unix::fs::symlink(root().join(shared), dir.join(shared)).unwrap();
        }
        for b in runnable {
            // `set -m`: a server started with `&` gets its own process
            // group, so that `kill %1` reaches it.
            let script = format!("set -euo pipefail\nset -m\n{}\nwait\n", b.code);
            let out = Command::new("timeout")
                .args(["300", "bash", "-c", &script])
                .current_dir(&dir)
                .env("PATH", &path)
                .env("HEARTH_THREADS", "2")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}:{}: the block failed\n--- block\n{}\n--- stdout\n{}\n--- stderr\n{}",
                b.file,
                b.line,
                b.code,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
