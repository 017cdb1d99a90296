//! The book's generated reference pages are current: `docs/reference/cli.md`
//! (from the command's clap definition, printed by `hearth tool
//! cli-reference`) and `docs/reference/http-api.md` (from the server's
//! OpenAPI document, `hearth_server::OPENAPI`, rendered here). Each page is
//! a hand-written introduction, the [`MARKER`] line, then the generated
//! text; a test fails when the committed text differs from what the code
//! generates now, and `HEARTH_BLESS=1` rewrites it.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use hearth_cli::markdown::{anchor, inline};
use serde_json::{Map, Value};

/// The line after which a page is generated.
const MARKER: &str =
    "<!-- Generated below this line; to regenerate: HEARTH_BLESS=1 cargo test --release -p hearth-cli --test all -- reference -->";

fn page(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/reference")
        .join(name)
}

/// Compares the page's generated part with `generated`, or rewrites it
/// under `HEARTH_BLESS=1` (keeping the introduction).
fn check(name: &str, generated: &str) {
    let path = page(name);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let intro = match text.find(MARKER) {
        Some(at) => text[..at].to_string(),
        None => format!("# {name}\n\n"),
    };
    let want = format!("{intro}{MARKER}\n\n{generated}");
    if text == want {
        return;
    }
    if std::env::var_os("HEARTH_BLESS").is_some() {
        std::fs::write(&path, want).unwrap();
        return;
    }
    let line = text
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(text.lines().count().min(want.lines().count()));
    panic!(
        "docs/reference/{name} is not what the code generates now (first difference at line {}: {:?} \
         where {:?} is generated){}; regenerate it with \
         `HEARTH_BLESS=1 cargo test --release -p hearth-cli --test all -- reference`",
        line + 1,
        text.lines().nth(line).unwrap_or("<end>"),
        want.lines().nth(line).unwrap_or("<end>"),
        if text.contains(MARKER) {
            ""
        } else {
            " and it lacks the marker line"
        },
    );
}

#[test]
fn cli_reference_is_current() {
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["tool", "cli-reference"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check("cli.md", &String::from_utf8(out.stdout).unwrap());
}

#[test]
fn http_api_reference_is_current() {
    let doc: Value = serde_json::from_str(hearth_server::OPENAPI).unwrap();
    check("http-api.md", &http_api(&doc, hearth_server::OPENAPI));
}

/// The methods an OpenAPI path item may hold, in the order shown.
const METHODS: &[&str] = &["get", "put", "post", "patch", "delete", "head", "options"];

/// The keys of `map` in the order they are written in `raw` (the document
/// `map` was read from: serde_json's maps sort their keys), for keys
/// written once as `"key": {`; any other key after them, sorted.
fn in_document_order<'a>(raw: &str, map: &'a Map<String, Value>) -> Vec<(&'a String, &'a Value)> {
    let mut entries: Vec<(Option<usize>, &String, &Value)> = map
        .iter()
        .map(|(k, v)| {
            let at = raw.find(&format!("\"{k}\": {{"));
            let once = at.is_some_and(|at| !raw[at + 1..].contains(&format!("\"{k}\": {{")));
            (at.filter(|_| once), k, v)
        })
        .collect();
    entries.sort_by_key(|(at, k, _)| (at.is_none(), *at, (*k).clone()));
    entries.into_iter().map(|(_, k, v)| (k, v)).collect()
}

/// The reference of an OpenAPI 3.1 document (`raw`, parsed as `doc`): the
/// API, authentication, the endpoints (in the document's order, then by
/// method), the error codes and the schemas (in the document's order).
fn http_api(doc: &Value, raw: &str) -> String {
    let mut out = String::new();
    let info = &doc["info"];
    let _ = writeln!(
        out,
        "## The API\n\n**{}**, API version {} (OpenAPI {}).\n",
        text(&info["title"]),
        text(&info["version"]),
        text(&doc["openapi"]),
    );
    if let Some(d) = info["description"].as_str() {
        let _ = writeln!(out, "{}\n", inline(d));
    }
    if let Some(servers) = doc["servers"].as_array() {
        let urls: Vec<String> = servers
            .iter()
            .map(|s| format!("`{}`", text(&s["url"])))
            .collect();
        let _ = writeln!(out, "Default address: {}.\n", urls.join(", "));
    }

    out.push_str("## Authentication\n\n");
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, s) in &schemes {
        let how = match (text(&s["type"]).as_str(), text(&s["scheme"]).as_str()) {
            ("http", "bearer") => "`Authorization: Bearer TOKEN`".to_string(),
            (t, s) => format!("{t} {s}"),
        };
        let _ = writeln!(
            out,
            "* `{name}`: {how}. {}",
            inline(s["description"].as_str().unwrap_or(""))
        );
    }
    let _ = writeln!(
        out,
        "\nAn endpoint needs {} unless it says otherwise.\n",
        security(&doc["security"])
    );

    // The endpoints: an index, then one section each.
    let paths = doc["paths"].as_object().cloned().unwrap_or_default();
    let mut ops = Vec::new();
    for (path, item) in in_document_order(raw, &paths) {
        for m in METHODS {
            if let Some(op) = item.get(*m) {
                ops.push((path.as_str(), *m, item, op));
            }
        }
    }
    out.push_str("## Endpoints\n\n| Endpoint | What it does | Authentication |\n|---|---|---|\n");
    for (path, m, _, op) in &ops {
        let title = format!("{} {path}", m.to_uppercase());
        let _ = writeln!(
            out,
            "| [`{title}`](#{}) | {} | {} |",
            anchor(&title),
            cell(&inline(op["summary"].as_str().unwrap_or(""))),
            cell(&security(op.get("security").unwrap_or(&doc["security"]))),
        );
    }
    out.push('\n');
    let statuses = status_of_codes(doc);
    for (path, m, item, op) in &ops {
        operation(&mut out, doc, path, m, item, op, &statuses);
    }

    error_codes(&mut out, doc);

    out.push_str("## Schemas\n\n");
    let schemas = doc["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, s) in in_document_order(raw, &schemas) {
        schema(&mut out, name, s);
    }
    out
}

/// What a security requirement asks for, in words.
fn security(req: &Value) -> String {
    let alternatives: Vec<String> = req
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_object)
                .map(|o| {
                    if o.is_empty() {
                        "none".to_string()
                    } else {
                        o.keys()
                            .map(|k| format!("[`{k}`](#authentication)"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if alternatives.is_empty() {
        "none".to_string()
    } else {
        alternatives.join(" or ")
    }
}

/// Each error code's HTTP status (the `x-status` of the `Error` schema's
/// `code`).
fn status_of_codes(doc: &Value) -> Map<String, Value> {
    doc["components"]["schemas"]["Error"]["properties"]["code"]["x-status"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn operation(
    out: &mut String,
    doc: &Value,
    path: &str,
    method: &str,
    item: &Value,
    op: &Value,
    statuses: &Map<String, Value>,
) {
    let _ = writeln!(out, "### `{} {path}`\n", method.to_uppercase());
    for key in ["summary", "description"] {
        if let Some(t) = op[key].as_str() {
            let _ = writeln!(out, "{}\n", inline(t));
        }
    }
    let _ = writeln!(
        out,
        "Authentication: {}.\n",
        security(op.get("security").unwrap_or(&doc["security"]))
    );

    // Path-level parameters first, then the operation's own.
    let params: Vec<&Value> = [&item["parameters"], &op["parameters"]]
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .collect();
    if !params.is_empty() {
        out.push_str(
            "Parameters:\n\n| Name | In | Required | Type | Description |\n|---|---|---|---|---|\n",
        );
        for p in params {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                text(&p["name"]),
                text(&p["in"]),
                yes_no(p["required"].as_bool().unwrap_or(false)),
                cell(&type_of(&p["schema"])),
                cell(&inline(p["description"].as_str().unwrap_or(""))),
            );
        }
        out.push('\n');
    }

    if let Some(body) = op.get("requestBody") {
        let _ = writeln!(
            out,
            "Request body ({}, {}): {}\n",
            if body["required"].as_bool().unwrap_or(false) {
                "required"
            } else {
                "optional"
            },
            content(&body["content"]),
            inline(body["description"].as_str().unwrap_or("")),
        );
    }

    let codes: Vec<&str> = op["x-error-codes"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("Responses:\n\n| Status | Meaning | Body |\n|---|---|---|\n");
    if let Some(responses) = op["responses"].as_object() {
        for (status, r) in responses {
            let r = resolve(doc, r);
            let own: Vec<String> = codes
                .iter()
                .filter(|c| statuses.get(**c).map(|s| s.to_string()) == Some(status.clone()))
                .map(|c| format!("[`{c}`](#error-codes)"))
                .collect();
            // A shared error response names every code of its status: say
            // only the ones this operation may answer.
            let meaning = if own.is_empty() {
                cell(&inline(r["description"].as_str().unwrap_or("")))
            } else {
                format!("Refused: {}", own.join(", "))
            };
            let _ = writeln!(
                out,
                "| {status} | {meaning} | {} |",
                cell(&content(&r["content"]))
            );
        }
    }
    out.push('\n');
}

/// Follows a `$ref` within the document.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => doc.pointer(pointer).unwrap_or(v),
        None => v,
    }
}

/// A content map: each media type and its schema.
fn content(c: &Value) -> String {
    let Some(c) = c.as_object() else {
        return "none".to_string();
    };
    c.iter()
        .map(|(media, m)| format!("`{media}`, {}", type_of(&m["schema"])))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A schema in a few words: a link to a named schema, or its type.
fn type_of(s: &Value) -> String {
    if let Some(name) = s["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        return format!("[`{name}`](#{})", anchor(name));
    }
    let mut t = text(&s["type"]);
    if t.is_empty() {
        t = "any".to_string();
    }
    if t == "string" && s["format"] == "binary" {
        return "bytes".to_string();
    }
    if t == "object" {
        if let Some(extra) = s.get("additionalProperties") {
            return format!("object of {}", type_of(extra));
        }
    }
    if t == "array" {
        return format!("array of {}", type_of(&s["items"]));
    }
    let mut facts = Vec::new();
    if let Some(f) = s["format"].as_str() {
        facts.push(f.to_string());
    }
    if let Some(m) = s["minimum"].as_i64() {
        facts.push(format!("at least {m}"));
    }
    if let Some(p) = s["pattern"].as_str() {
        facts.push(format!("`{p}`"));
    }
    if let Some(e) = s["enum"].as_array() {
        let values: Vec<String> = e.iter().map(|v| format!("`{}`", text(v))).collect();
        facts.push(format!("one of {}", values.join(", ")));
    }
    if facts.is_empty() {
        t
    } else {
        format!("{t} ({})", facts.join(", "))
    }
}

/// The `Error` schema's codes: status and when each is answered.
fn error_codes(out: &mut String, doc: &Value) {
    let code = &doc["components"]["schemas"]["Error"]["properties"]["code"];
    let Some(codes) = code["enum"].as_array() else {
        return;
    };
    out.push_str("## Error codes\n\n");
    if let Some(d) = doc["components"]["schemas"]["Error"]["description"].as_str() {
        let _ = writeln!(
            out,
            "{} Its `code` is one of these. {}\n",
            inline(d),
            inline(code["description"].as_str().unwrap_or(""))
        );
    }
    out.push_str("| Code | Status | When |\n|---|---|---|\n");
    for c in codes {
        let c = text(c);
        let _ = writeln!(
            out,
            "| `{c}` | {} | {} |",
            code["x-status"][&c],
            cell(&inline(code["x-when"][&c].as_str().unwrap_or(""))),
        );
    }
    out.push('\n');
}

fn schema(out: &mut String, name: &str, s: &Value) {
    let _ = writeln!(out, "### `{name}`\n");
    if let Some(d) = s["description"].as_str() {
        let _ = writeln!(out, "{}\n", inline(d));
    }
    let Some(props) = s["properties"].as_object() else {
        let _ = writeln!(out, "{}\n", type_of(s));
        return;
    };
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // The required fields in the order `required` lists them, then the
    // others.
    let mut fields: Vec<(&String, &Value)> = props.iter().collect();
    fields.sort_by_key(|(f, _)| {
        required
            .iter()
            .position(|r| r == f)
            .unwrap_or(required.len())
    });
    out.push_str("| Field | Type | Required | Description |\n|---|---|---|---|\n");
    for (field, p) in fields {
        // A long list of values is a section of its own.
        let ty = if p.get("x-when").is_some() {
            format!("{} (see [Error codes](#error-codes))", text(&p["type"]))
        } else {
            type_of(p)
        };
        let _ = writeln!(
            out,
            "| `{field}` | {} | {} | {} |",
            cell(&ty),
            yes_no(required.contains(&field.as_str())),
            cell(&inline(p["description"].as_str().unwrap_or(""))),
        );
    }
    out.push('\n');
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// A string value as text (`""` when absent, numbers as written).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// Markdown (from [`inline`](hearth_cli::markdown::inline) or formatted here) for a table cell: a `|`
/// not escaped yet (in a code span) is escaped too, as tables need.
fn cell(t: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in t.chars() {
        if c == '|' && !escaped {
            out.push('\\');
        }
        escaped = c == '\\' && !escaped;
        out.push(if c == '\n' { ' ' } else { c });
    }
    out
}
