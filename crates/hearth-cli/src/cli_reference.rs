//! `hearth tool cli-reference`: the command's reference in Markdown,
//! walked from its clap definition (docs/reference/cli.md is its
//! introduction followed by this output; a test in tests/reference.rs
//! checks that the committed page is current).

use std::fmt::Write;

use clap::{Arg, Command};
use hearth_cli::markdown::{anchor, inline};

/// `hearth tool cli-reference`.
#[derive(clap::Args)]
pub struct Args {}

/// `hearth tool cli-reference`: prints the reference of `cmd` (the whole
/// `hearth` tree).
pub fn run(_: Args, mut cmd: Command) -> Result<(), hearth::Error> {
    cmd.build();
    print!("{}", markdown(&cmd));
    Ok(())
}

/// The reference of a built command tree: the top command with the
/// whole tree of commands, the value names, then one section per command,
/// depth first in declaration order.
pub fn markdown(cmd: &Command) -> String {
    let mut out = String::new();
    let mut all = Vec::new();
    walk(cmd, &mut all);
    for (i, c) in all.iter().enumerate() {
        section(c, &mut out);
        if i == 0 {
            out.push_str(
                "## Values\n\nWhat each value name in the options stands for:\n\n\
                 | Value | Meaning |\n|---|---|\n",
            );
            for (name, meaning) in hearth_cli::help::VALUE_NAMES {
                let _ = writeln!(out, "| `{name}` | {} |", inline(meaning));
            }
            out.push('\n');
        }
    }
    out
}

/// `cmd` and its visible commands, depth first (clap's `help` commands
/// left out: every command takes `--help`).
fn walk<'a>(cmd: &'a Command, all: &mut Vec<&'a Command>) {
    all.push(cmd);
    for sub in cmd.get_subcommands() {
        if !sub.is_hide_set() && sub.get_name() != "help" {
            walk(sub, all);
        }
    }
}

fn section(cmd: &Command, out: &mut String) {
    let path = cmd.get_bin_name().unwrap_or(cmd.get_name());
    let _ = writeln!(out, "## `{path}`\n");
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(out, "{}\n", sentence(&paragraphs(&about.to_string())));
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let _ = writeln!(out, "```text\n{usage}\n```\n");

    // The top command lists the whole tree, the others their own
    // commands.
    let mut subs = Vec::new();
    walk(cmd, &mut subs);
    let top = path.matches(' ').count();
    let subs: Vec<&Command> = subs
        .into_iter()
        .skip(1)
        .filter(|s| top == 0 || s.get_bin_name().unwrap_or("").matches(' ').count() == top + 1)
        .collect();
    if !subs.is_empty() {
        out.push_str("**Commands:**\n\n");
        for s in subs {
            let sub_path = s.get_bin_name().unwrap_or(s.get_name());
            let depth = sub_path.matches(' ').count() - top - 1;
            let _ = writeln!(
                out,
                "{}* [`{}`](#{}): {}",
                "  ".repeat(depth),
                sub_path.split_once(' ').map_or(sub_path, |(_, rest)| rest),
                anchor(sub_path),
                inline(&summary(s))
            );
        }
        out.push('\n');
    }

    let args: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    let (positionals, options): (Vec<&Arg>, Vec<&Arg>) =
        args.into_iter().partition(|a| a.is_positional());
    for (title, list) in [("Arguments", positionals), ("Options", options)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "**{title}:**\n");
        for a in list {
            argument(a, out);
        }
        out.push('\n');
    }
}

/// One argument as a list item: its syntax, then its help and facts.
fn argument(a: &Arg, out: &mut String) {
    let mut facts = Vec::new();
    if a.is_required_set() {
        facts.push("required".to_string());
    }
    let values: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    // A flag's implicit `false` says nothing.
    let defaults: Vec<String> = if a.get_action().takes_values() {
        a.get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect()
    } else {
        Vec::new()
    };
    if !defaults.is_empty() {
        facts.push(format!("default: {}", defaults.join(", ")));
    }
    if let Some(env) = a.get_env() {
        facts.push(format!("environment: `{}`", env.to_string_lossy()));
    }
    let head = syntax(a);
    let facts = if facts.is_empty() {
        String::new()
    } else {
        format!(" ({})", facts.join("; "))
    };
    let _ = write!(out, "* `{head}`{facts}");
    let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string());
    let mut text = sentence(&paragraphs(&help.unwrap_or_default()));
    if !values.is_empty() {
        let _ = write!(text, " Values: {}.", values.join(", "));
    }
    match text.trim() {
        "" => out.push('\n'),
        text => {
            let mut lines = text.lines();
            let _ = writeln!(out, ": {}", lines.next().unwrap_or(""));
            for line in lines {
                if line.is_empty() {
                    out.push('\n');
                } else {
                    let _ = writeln!(out, "  {line}");
                }
            }
        }
    }
}

/// Text ending as a sentence: clap drops the period of a one-paragraph
/// doc comment.
fn sentence(text: &str) -> String {
    let text = text.trim_end();
    match text.chars().last() {
        Some(c) if !".!?:".contains(c) => format!("{text}."),
        _ => text.to_string(),
    }
}

/// How an argument is written: `-t, --threads <N>`, `--check`, `<FILE>`,
/// `<ARGS>...`.
fn syntax(a: &Arg) -> String {
    let takes = a.get_action().takes_values();
    let names: Vec<String> = match a.get_value_names() {
        Some(names) => names.iter().map(|n| n.to_string()).collect(),
        None => vec![a.get_id().as_str().to_uppercase()],
    };
    let many = a
        .get_num_args()
        .is_some_and(|n| n.max_values() > names.len())
        || matches!(a.get_action(), clap::ArgAction::Append) && a.is_positional();
    let mut value = names
        .iter()
        .map(|n| format!("<{n}>"))
        .collect::<Vec<_>>()
        .join(" ");
    if many {
        value.push_str("...");
    }
    if a.is_positional() {
        return value;
    }
    let mut flags = Vec::new();
    if let Some(s) = a.get_short() {
        flags.push(format!("-{s}"));
    }
    if let Some(l) = a.get_long() {
        flags.push(format!("--{l}"));
    }
    let mut head = flags.join(", ");
    if takes {
        head.push(' ');
        head.push_str(&value);
    }
    head
}

/// A command's one-line summary.
fn summary(cmd: &Command) -> String {
    cmd.get_about()
        .map(|a| a.to_string())
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Help text as Markdown paragraphs: each paragraph's lines joined into
/// one, markup characters outside `code spans` escaped.
fn paragraphs(text: &str) -> String {
    text.trim()
        .split("\n\n")
        .map(|p| {
            let joined = p.lines().map(str::trim).collect::<Vec<_>>().join(" ");
            // A paragraph starting with `#` would be a heading.
            let escape = if joined.starts_with('#') { "\\" } else { "" };
            format!("{escape}{}", inline(&joined))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
