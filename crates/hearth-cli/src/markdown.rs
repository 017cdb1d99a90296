//! Text as Markdown for the generated reference pages (`hearth tool
//! cli-reference` and the HTTP API page's test): one escaping rule and one
//! heading-id rule for both.

/// One line of text as Markdown: what would be markup outside `code spans`
/// is escaped, so that `<FILE>`, `{code, message}` or `a*b` reads as
/// written.
pub fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    for c in text.chars() {
        if c == '`' {
            code = !code;
        } else if !code && "\\*<>[]|".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The id mdBook and GitHub give a heading of this text.
pub fn anchor(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| match c {
            c if c.is_whitespace() => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}
