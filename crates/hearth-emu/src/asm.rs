//! A32 assembly text (the usual unified syntax, the supported subset) to
//! an [`Image`]: code from 0x10000 (`.text`), a literal pool after it for
//! `ldr rX, =value`, data from 0x20000 (`.data`, `.bss`), entry at
//! `_start` (else the first instruction). Each line is an instruction, a
//! label (`name:`), or a directive: `.word`, `.hword`, `.short`, `.byte`,
//! `.space`/`.skip`, `.align`, `.ascii`, `.asciz`, `.equ`/`.set`; `.global`,
//! `.syntax`, `.arm`, `.type`, `.size` are accepted and ignored.
//! Comments start with `@` or `//`.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::decode::decode;
use crate::encode::{encode, encode_imm};
use crate::image::Image;
use crate::isa::{Cond, DpOp, Instr, Offset, Op, Operand2, Reg, Shift, ShiftKind, Size};

/// Where the code goes by default (as `tests/corpus/link.ld` places ELF
/// programs' `.text`).
pub const TEXT_BASE: u32 = 0x10000;
/// Where the data goes by default (`.data`, `.bss`).
pub const DATA_BASE: u32 = 0x20000;

/// Where the code and the data go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bases {
    /// The first address of the code (and the literal pool after it).
    pub text: u32,
    /// The first address of the data memory.
    pub data: u32,
}

/// The default layout (as `tests/corpus/link.ld` places ELF programs).
pub const BASES: Bases = Bases {
    text: TEXT_BASE,
    data: DATA_BASE,
};

/// A layout below 64 KiB, for the 16-bit mode: code from 0x1000, data from
/// 0x8000.
pub const BASES_16: Bases = Bases {
    text: 0x1000,
    data: 0x8000,
};

/// An assembly error, with its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}: `{text}`")]
pub struct AsmError {
    /// The line, from 1 (0: the whole program, e.g. no instructions).
    pub line: usize,
    /// The line's text, trimmed.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Text,
    Data,
}

/// One parsed line's contribution.
enum Item {
    Instr(String, String),
    Bytes(Vec<Expr>, usize),
    Space(u32),
    Align(u32),
}

/// A value: a number or a symbol plus an offset.
#[derive(Clone, Debug)]
enum Expr {
    Num(i64),
    Sym(String, i64),
}

fn parse_num(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = s.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if s.len() == 3 && s.starts_with('\'') && s.ends_with('\'') {
        s.as_bytes()[1] as i64
    } else {
        s.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

fn parse_expr(s: &str) -> Option<Expr> {
    let s = s.trim();
    if let Some(v) = parse_num(s) {
        return Some(Expr::Num(v));
    }
    let (name, off) = match s.find(['+', '-']) {
        Some(i) if i > 0 => (&s[..i], parse_num(&s[i..])?),
        _ => (s, 0),
    };
    let name = name.trim();
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$');
    ok.then(|| Expr::Sym(name.to_string(), off))
}

/// Splits on commas outside brackets and braces.
fn split_operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn strip_comment(line: &str) -> &str {
    let mut end = line.len();
    for pat in ["@", "//"] {
        if let Some(i) = line.find(pat) {
            end = end.min(i);
        }
    }
    &line[..end]
}

/// Assembles `text` into an image at the default [`BASES`].
pub fn assemble(text: &str) -> Result<Image, AsmError> {
    assemble_at(text, BASES)
}

/// Assembles `text` into an image with its code and data at `bases`: pass
/// 1 places every line (`lay_out`: labels, directives, instructions),
/// pass 2 encodes them and fills the literal pool (`emit`), then the
/// image is put together (`image_of`).
pub fn assemble_at(text: &str, bases: Bases) -> Result<Image, AsmError> {
    if bases.data < bases.text.saturating_add(0x1000) {
        return Err(AsmError::whole(
            "the data must start at least 4 KiB after the code",
        ));
    }
    let layout = lay_out(text, bases)?;
    if layout.text_end > bases.data {
        return Err(AsmError::whole(&format!(
            "the code runs into the data at {:#x}",
            bases.data
        )));
    }
    let out = emit(&layout, bases)?;
    image_of(out, layout.symbols, bases)
}

impl AsmError {
    /// An error of line `line` (1-based), whose text is `raw`.
    fn at(line: usize, raw: &str, message: String) -> AsmError {
        AsmError {
            line,
            text: raw.trim().to_string(),
            message,
        }
    }

    /// An error of the whole program (line 0).
    fn whole(message: &str) -> AsmError {
        AsmError {
            line: 0,
            text: String::new(),
            message: message.to_string(),
        }
    }
}

/// An item placed by pass 1.
struct Placed {
    line: usize,
    text: String,
    section: Section,
    addr: u32,
    item: Item,
}

/// Pass 1's result: the items at their addresses, the symbols (labels and
/// `.equ` constants), which symbols are labels (addresses), and where the
/// code ends.
struct Layout {
    items: Vec<Placed>,
    symbols: HashMap<String, i64>,
    labels: HashSet<String>,
    text_end: u32,
}

/// What a line (after its labels) is.
enum Line {
    /// A section switch.
    Section(Section),
    /// A directive that changes nothing here (`.global`, `.syntax`, ...).
    Ignored,
    /// `.equ name, value`.
    Equ(String, i64),
    /// Something that takes room: an instruction or data.
    Item(Item),
}

impl Item {
    /// The bytes the item takes at `addr`.
    fn size(&self, addr: u32) -> u32 {
        match self {
            Item::Instr(..) => 4,
            Item::Bytes(v, s) => (v.len() * s) as u32,
            Item::Space(n) => *n,
            Item::Align(a) => (a - addr % a) % a,
        }
    }
}

/// Pass 1: labels get the address of their line; every item its address.
fn lay_out(text: &str, bases: Bases) -> Result<Layout, AsmError> {
    let mut layout = Layout {
        items: Vec::new(),
        symbols: HashMap::new(),
        labels: HashSet::new(),
        text_end: bases.text,
    };
    let starts = [bases.text, bases.data];
    let mut at = starts;
    let mut section = Section::Text;
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |m: String| AsmError::at(line_no, raw, m);
        let here = at[section as usize];
        let line = take_labels(strip_comment(raw).trim(), here, &mut layout).map_err(err)?;
        if line.is_empty() {
            continue;
        }
        let item = match classify(line, section, here).map_err(err)? {
            Line::Section(s) => {
                section = s;
                continue;
            }
            Line::Ignored => continue,
            Line::Equ(name, value) => {
                layout.symbols.insert(name, value);
                continue;
            }
            Line::Item(item) => item,
        };
        let size = item.size(here);
        layout.items.push(Placed {
            line: line_no,
            text: raw.trim().to_string(),
            section,
            addr: here,
            item,
        });
        let start = starts[section as usize];
        at[section as usize] = here
            .checked_add(size)
            .filter(|&e| e - start < 1 << 24)
            .ok_or_else(|| err("section larger than 16 MiB".into()))?;
    }
    layout.text_end = at[Section::Text as usize];
    Ok(layout)
}

/// Defines the labels (`name:`) at the start of `line` at `addr`; returns
/// the rest of the line.
fn take_labels<'l>(mut line: &'l str, addr: u32, layout: &mut Layout) -> Result<&'l str, String> {
    while let Some(i) = line.find(':') {
        let label = line[..i].trim();
        if label.is_empty() || label.contains(char::is_whitespace) || line[..i].contains('"') {
            break;
        }
        if layout
            .symbols
            .insert(label.to_string(), addr as i64)
            .is_some()
        {
            return Err(format!("label `{label}` defined twice"));
        }
        layout.labels.insert(label.to_string());
        line = line[i + 1..].trim();
    }
    Ok(line)
}

/// A directive, or an instruction of `.text` at `addr`.
fn classify(line: &str, section: Section, addr: u32) -> Result<Line, String> {
    let (head, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let head = head.to_ascii_lowercase();
    if head.starts_with('.') {
        return directive(&head, rest);
    }
    if section != Section::Text {
        return Err("instructions belong in .text".into());
    }
    if !addr.is_multiple_of(4) {
        return Err("instruction not word-aligned".into());
    }
    Ok(Line::Item(Item::Instr(head, rest.to_string())))
}

/// A directive `head` (lower case) with its operands `rest`.
fn directive(head: &str, rest: &str) -> Result<Line, String> {
    Ok(match head {
        ".text" => Line::Section(Section::Text),
        ".data" | ".bss" => Line::Section(Section::Data),
        ".section" if rest.starts_with(".text") => Line::Section(Section::Text),
        ".section" => Line::Section(Section::Data),
        ".global" | ".globl" | ".syntax" | ".arm" | ".code" | ".type" | ".size" | ".file"
        | ".fpu" | ".cpu" | ".arch" | ".p2align_" => Line::Ignored,
        ".equ" | ".set" => {
            let ops = split_operands(rest);
            let [name, value] = ops.as_slice() else {
                return Err("expected `.equ name, value`".into());
            };
            let v = parse_num(value).ok_or("expected a number")?;
            Line::Equ(name.clone(), v)
        }
        ".word" | ".long" | ".4byte" | ".hword" | ".short" | ".2byte" | ".byte" => {
            let size = match head {
                ".word" | ".long" | ".4byte" => 4,
                ".byte" => 1,
                _ => 2,
            };
            let exprs = split_operands(rest)
                .iter()
                .map(|e| parse_expr(e).ok_or_else(|| format!("bad value `{e}`")))
                .collect::<Result<Vec<_>, _>>()?;
            Line::Item(Item::Bytes(exprs, size))
        }
        ".ascii" | ".asciz" | ".string" => {
            let inner = rest
                .trim()
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .ok_or("expected a quoted string")?;
            let mut bytes: Vec<Expr> = unescape(inner)?
                .into_iter()
                .map(|b| Expr::Num(b as i64))
                .collect();
            if head != ".ascii" {
                bytes.push(Expr::Num(0));
            }
            Line::Item(Item::Bytes(bytes, 1))
        }
        ".space" | ".skip" | ".zero" => {
            let n = parse_num(split_operands(rest).first().map_or("", |s| s))
                .filter(|&n| (0..1 << 24).contains(&n))
                .ok_or("expected a size below 16 MiB")?;
            Line::Item(Item::Space(n as u32))
        }
        ".align" | ".balign" | ".p2align" => {
            let n = parse_num(rest).ok_or("expected a number")?;
            let bytes = if head == ".balign" {
                n
            } else {
                1 << n.clamp(0, 12)
            };
            if bytes <= 0 || bytes & (bytes - 1) != 0 || bytes > 4096 {
                return Err("alignment must be a power of two up to 4096".into());
            }
            Line::Item(Item::Align(bytes as u32))
        }
        h => return Err(format!("unknown directive `{h}`")),
    })
}

/// Pass 2's result: read-only bytes (code and literal pool) by address,
/// the data memory, the decoded instructions.
#[derive(Default)]
struct Output {
    rom: BTreeMap<u32, u8>,
    data: Vec<u8>,
    code: BTreeMap<u32, Instr>,
}

impl Output {
    /// Writes `bytes` at `addr` of `section` (the data from `data_base`).
    fn put(&mut self, section: Section, addr: u32, bytes: &[u8], data_base: u32) {
        match section {
            Section::Text => {
                for (k, &b) in bytes.iter().enumerate() {
                    self.rom.insert(addr + k as u32, b);
                }
            }
            Section::Data => {
                let off = (addr - data_base) as usize;
                if self.data.len() < off + bytes.len() {
                    self.data.resize(off + bytes.len(), 0);
                }
                self.data[off..off + bytes.len()].copy_from_slice(bytes);
            }
        }
    }
}

/// Pass 2: encodes each instruction (checked by decoding it back) and
/// data item, collecting `ldr rX, =value` literals into a pool after the
/// code.
fn emit(layout: &Layout, bases: Bases) -> Result<Output, AsmError> {
    let pool_base = (layout.text_end + 3) & !3;
    let mut pool: Vec<u32> = Vec::new();
    let mut out = Output::default();
    let resolve = |e: &Expr| -> Result<i64, String> {
        match e {
            Expr::Num(v) => Ok(*v),
            Expr::Sym(s, off) => layout
                .symbols
                .get(s)
                .map(|v| v + off)
                .ok_or_else(|| format!("undefined symbol `{s}`")),
        }
    };
    let is_address = |e: &Expr| matches!(e, Expr::Sym(s, _) if layout.labels.contains(s));
    for p in &layout.items {
        let err = |m: String| AsmError {
            line: p.line,
            text: p.text.clone(),
            message: m,
        };
        match &p.item {
            Item::Instr(m, ops) => {
                let mut lit = |v: u32| -> u32 {
                    let i = pool.iter().position(|&w| w == v).unwrap_or_else(|| {
                        pool.push(v);
                        pool.len() - 1
                    });
                    pool_base + 4 * i as u32
                };
                let instr =
                    parse_instr(m, ops, p.addr, &resolve, &is_address, &mut lit).map_err(err)?;
                let word = encode(p.addr, &instr).map_err(err)?;
                let back = decode(p.addr, word).map_err(|e| err(e.to_string()))?;
                out.code.insert(p.addr, back);
                out.put(p.section, p.addr, &word.to_le_bytes(), bases.data);
            }
            Item::Bytes(exprs, size) => {
                let bytes = data_bytes(exprs, *size, &resolve).map_err(err)?;
                out.put(p.section, p.addr, &bytes, bases.data);
            }
            Item::Space(n) => out.put(p.section, p.addr, &vec![0; *n as usize], bases.data),
            Item::Align(_) => {}
        }
    }
    for (i, v) in pool.iter().enumerate() {
        out.put(
            Section::Text,
            pool_base + 4 * i as u32,
            &v.to_le_bytes(),
            bases.data,
        );
    }
    Ok(out)
}

/// `.word` / `.hword` / `.byte` values, little-endian, each checked to
/// fit `size` bytes.
fn data_bytes(
    exprs: &[Expr],
    size: usize,
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    for e in exprs {
        let v = resolve(e)?;
        let fits = match size {
            1 => (-128..256).contains(&v),
            2 => (-32768..65536).contains(&v),
            _ => (-(1i64 << 31)..(1i64 << 32)).contains(&v),
        };
        if !fits {
            return Err(format!("{v} does not fit {size} byte(s)"));
        }
        bytes.extend_from_slice(&(v as u32).to_le_bytes()[..size]);
    }
    Ok(bytes)
}

/// The image: read-only memory from the text base, the data, the entry
/// (`_start`, else the first instruction) and the symbols.
fn image_of(out: Output, symbols: HashMap<String, i64>, bases: Bases) -> Result<Image, AsmError> {
    if out.code.is_empty() {
        return Err(AsmError::whole("no instructions"));
    }
    let end = out.rom.keys().next_back().map_or(bases.text, |&a| a + 1);
    let mut bytes = vec![0u8; (end - bases.text) as usize];
    for (a, b) in out.rom {
        bytes[(a - bases.text) as usize] = b;
    }
    let entry = symbols
        .get("_start")
        .map(|&v| v as u32)
        .unwrap_or_else(|| *out.code.keys().next().expect("code is not empty"));
    let mut image = Image {
        entry,
        code: out.code,
        data_base: bases.data,
        data: out.data,
        ..Image::default()
    };
    image.rom.insert(bases.text, bytes);
    image.symbols = symbols.into_iter().map(|(k, v)| (k, v as u32)).collect();
    Ok(image)
}

fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut it = s.bytes();
    while let Some(b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        out.push(match it.next() {
            Some(b'n') => b'\n',
            Some(b't') => b'\t',
            Some(b'0') => 0,
            Some(b'\\') => b'\\',
            Some(b'"') => b'"',
            other => return Err(format!("unknown escape {other:?}")),
        });
    }
    Ok(out)
}

fn reg(s: &str) -> Result<Reg, String> {
    let s = s.trim().to_ascii_lowercase();
    Ok(match s.as_str() {
        "sp" => 13,
        "lr" => 14,
        "pc" => 15,
        "fp" => 11,
        "ip" => 12,
        "sl" => 10,
        "sb" => 9,
        _ => s
            .strip_prefix('r')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|&n| n < 16)
            .ok_or_else(|| format!("`{s}` is not a register"))?,
    })
}

fn imm(s: &str, resolve: &dyn Fn(&Expr) -> Result<i64, String>) -> Result<i64, String> {
    let s = s.trim();
    let body = s
        .strip_prefix('#')
        .ok_or_else(|| format!("`{s}`: expected #immediate"))?;
    let e = parse_expr(body).ok_or_else(|| format!("bad immediate `{s}`"))?;
    resolve(&e)
}

fn cond_of(s: &str) -> Option<Cond> {
    use Cond::*;
    Some(match s {
        "" | "al" => Al,
        "eq" => Eq,
        "ne" => Ne,
        "cs" | "hs" => Cs,
        "cc" | "lo" => Cc,
        "mi" => Mi,
        "pl" => Pl,
        "vs" => Vs,
        "vc" => Vc,
        "hi" => Hi,
        "ls" => Ls,
        "ge" => Ge,
        "lt" => Lt,
        "gt" => Gt,
        "le" => Le,
        _ => return None,
    })
}

const MNEMONICS: &[(&str, bool)] = &[
    // (mnemonic, takes an `s` suffix)
    ("and", true),
    ("eor", true),
    ("sub", true),
    ("rsb", true),
    ("add", true),
    ("adc", true),
    ("sbc", true),
    ("rsc", true),
    ("tst", false),
    ("teq", false),
    ("cmp", false),
    ("cmn", false),
    ("orr", true),
    ("mov", true),
    ("bic", true),
    ("mvn", true),
    ("movw", false),
    ("movt", false),
    ("mul", true),
    ("mla", true),
    ("mls", false),
    ("umull", true),
    ("smull", true),
    ("umlal", true),
    ("smlal", true),
    ("udiv", false),
    ("sdiv", false),
    ("clz", false),
    ("rbit", false),
    ("rev", false),
    ("rev16", false),
    ("bfc", false),
    ("bfi", false),
    ("ubfx", false),
    ("sbfx", false),
    ("uxtb", false),
    ("uxth", false),
    ("sxtb", false),
    ("sxth", false),
    ("lsl", true),
    ("lsr", true),
    ("asr", true),
    ("ror", true),
    ("rrx", true),
    ("ldr", false),
    ("str", false),
    ("ldrb", false),
    ("strb", false),
    ("ldrh", false),
    ("strh", false),
    ("ldrsb", false),
    ("ldrsh", false),
    ("ldm", false),
    ("ldmia", false),
    ("ldmfd", false),
    ("ldmib", false),
    ("ldmda", false),
    ("ldmdb", false),
    ("stm", false),
    ("stmia", false),
    ("stmib", false),
    ("stmda", false),
    ("stmdb", false),
    ("stmfd", false),
    ("push", false),
    ("pop", false),
    ("b", false),
    ("bl", false),
    ("bx", false),
    ("blx", false),
    ("svc", false),
    ("swi", false),
    ("nop", false),
];

/// Splits a mnemonic into base, `s` and condition.
fn split_mnemonic(m: &str) -> Option<(&'static str, bool, Cond)> {
    let mut bases: Vec<&(&str, bool)> = MNEMONICS.iter().collect();
    bases.sort_by_key(|(b, _)| std::cmp::Reverse(b.len()));
    for &&(base, takes_s) in &bases {
        let Some(rest) = m.strip_prefix(base) else {
            continue;
        };
        if let Some(c) = cond_of(rest) {
            return Some((base, false, c));
        }
        if takes_s {
            if let Some(c) = rest.strip_prefix('s').and_then(cond_of) {
                return Some((base, true, c));
            }
        }
    }
    None
}

fn shift_of(s: &str, resolve: &dyn Fn(&Expr) -> Result<i64, String>) -> Result<Shift, String> {
    let s = s.trim().to_ascii_lowercase();
    if s == "rrx" {
        return Ok(Shift::Rrx);
    }
    let (k, amount) = s
        .split_once(char::is_whitespace)
        .ok_or_else(|| format!("bad shift `{s}`"))?;
    let kind = match k {
        "lsl" | "asl" => ShiftKind::Lsl,
        "lsr" => ShiftKind::Lsr,
        "asr" => ShiftKind::Asr,
        "ror" => ShiftKind::Ror,
        _ => return Err(format!("bad shift `{k}`")),
    };
    let amount = amount.trim();
    if amount.starts_with('#') {
        let a = imm(amount, resolve)?;
        let max = if matches!(kind, ShiftKind::Lsr | ShiftKind::Asr) {
            32
        } else {
            31
        };
        if a == 0 {
            return Ok(Shift::None);
        }
        if !(1..=max).contains(&a) {
            return Err(format!("shift amount {a} out of range"));
        }
        Ok(Shift::Imm(kind, a as u8))
    } else {
        Ok(Shift::Reg(kind, reg(amount)?))
    }
}

/// A data-processing second operand from `ops` (an immediate, or a
/// register and an optional shift).
fn operand2(
    ops: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Operand2, String> {
    match ops {
        [one] if one.trim_start().starts_with('#') => {
            let v = imm(one, resolve)?;
            if !(-(1i64 << 31)..(1i64 << 32)).contains(&v) {
                return Err(format!("{v} does not fit 32 bits"));
            }
            let v = v as u32;
            Ok(Operand2::Imm {
                value: v,
                rotated: v >= 256,
            })
        }
        [rm] => Ok(Operand2::Reg {
            rm: reg(rm)?,
            shift: Shift::None,
        }),
        [rm, sh] => Ok(Operand2::Reg {
            rm: reg(rm)?,
            shift: shift_of(sh, resolve)?,
        }),
        _ => Err("expected an operand".into()),
    }
}

fn reg_list(s: &str) -> Result<u16, String> {
    let inner = s
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| format!("expected {{registers}}, got `{s}`"))?;
    let mut mask = 0u16;
    for part in inner.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (reg(a)?, reg(b)?);
                if a > b {
                    return Err(format!("bad range `{part}`"));
                }
                for r in a..=b {
                    mask |= 1 << r;
                }
            }
            None => mask |= 1 << reg(part)?,
        }
    }
    if mask == 0 {
        return Err("empty register list".into());
    }
    Ok(mask)
}

/// The data-processing mnemonics, in encoding order.
const DP_OPS: [&str; 16] = [
    "and", "eor", "sub", "rsb", "add", "adc", "sbc", "rsc", "tst", "teq", "cmp", "cmn", "orr",
    "mov", "bic", "mvn",
];

/// Parses one instruction at `addr`; `lit` places a literal-pool word.
/// One function per instruction class parses the operands.
fn parse_instr(
    m: &str,
    ops: &str,
    addr: u32,
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
    is_address: &dyn Fn(&Expr) -> bool,
    lit: &mut dyn FnMut(u32) -> u32,
) -> Result<Instr, String> {
    let (base, s, cond) = split_mnemonic(m).ok_or_else(|| format!("unknown instruction `{m}`"))?;
    let o = split_operands(ops);
    let op = match base {
        _ if DP_OPS.contains(&base) => data_processing(base, s, &o, resolve)?,
        "movw" | "movt" => move_half(base, &o, resolve)?,
        "lsl" | "lsr" | "asr" | "ror" | "rrx" => shift_alias(base, s, &o, resolve)?,
        "mul" | "mla" | "mls" | "umull" | "smull" | "umlal" | "smlal" => multiply(base, s, &o)?,
        "udiv" | "sdiv" => divide(base, &o)?,
        "clz" | "rbit" | "rev" | "rev16" => byte_op(base, &o)?,
        "bfc" | "bfi" | "ubfx" | "sbfx" => bit_field(base, &o, resolve)?,
        "uxtb" | "uxth" | "sxtb" | "sxth" => extend(base, &o, resolve)?,
        "ldr" | "str" | "ldrb" | "strb" | "ldrh" | "strh" | "ldrsb" | "ldrsh" => {
            memory(base, &o, addr, resolve, is_address, lit)?
        }
        "push" | "pop" => push_pop(base, &o)?,
        b if b.starts_with("ldm") || b.starts_with("stm") => block(base, &o)?,
        "b" | "bl" | "bx" | "blx" => branch(base, &o, resolve)?,
        "svc" | "swi" | "nop" => system(base, &o, resolve)?,
        _ => return Err(format!("unknown instruction `{m}`")),
    };
    Ok(Instr { cond, op })
}

/// Checks that `base` got `k` operands.
fn operands(base: &str, o: &[String], k: usize) -> Result<(), String> {
    if o.len() == k {
        Ok(())
    } else {
        Err(format!("`{base}` takes {k} operands, got {}", o.len()))
    }
}

/// AND .. MVN: `rd, rn, op2`, `rd, op2` (the two-operand form, or a move),
/// `rn, op2` (compares). An immediate that does not fit becomes the
/// complementary operation, or MOVW for a 16-bit MOV, as GNU as does.
fn data_processing(
    base: &str,
    s: bool,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    let code = DP_OPS
        .iter()
        .position(|&d| d == base)
        .ok_or_else(|| format!("`{base}` is not a data-processing operation"))?;
    let op = DpOp::from_bits(code as u32);
    let (rd, rn, rest) = if op.is_test() {
        (0, reg(o.first().ok_or("missing operand")?)?, &o[1..])
    } else if op.is_move() {
        (reg(o.first().ok_or("missing operand")?)?, 0, &o[1..])
    } else if o.len() >= 3 {
        (reg(&o[0])?, reg(&o[1])?, &o[2..])
    } else {
        let rd = reg(o.first().ok_or("missing operand")?)?;
        (rd, rd, &o[1..])
    };
    let op2 = operand2(rest, resolve)?;
    if let Operand2::Imm { value, .. } = op2 {
        if encode_imm(value, value >= 256).is_none() {
            return rewritten_immediate(op, s, rd, rn, value);
        }
    }
    Ok(Op::Dp {
        op,
        s: s || op.is_test(),
        rd,
        rn,
        op2,
    })
}

/// An immediate that is no A32 immediate: the complementary operation on
/// the negated or inverted value, or MOVW for a 16-bit constant.
fn rewritten_immediate(op: DpOp, s: bool, rd: Reg, rn: Reg, value: u32) -> Result<Op, String> {
    let alt = match op {
        DpOp::Mov => Some((DpOp::Mvn, !value)),
        DpOp::Mvn => Some((DpOp::Mov, !value)),
        DpOp::Add => Some((DpOp::Sub, value.wrapping_neg())),
        DpOp::Sub => Some((DpOp::Add, value.wrapping_neg())),
        DpOp::Cmp => Some((DpOp::Cmn, value.wrapping_neg())),
        DpOp::Cmn => Some((DpOp::Cmp, value.wrapping_neg())),
        DpOp::And => Some((DpOp::Bic, !value)),
        DpOp::Bic => Some((DpOp::And, !value)),
        _ => None,
    };
    match alt {
        Some((op, v)) if encode_imm(v, v >= 256).is_some() => Ok(Op::Dp {
            op,
            s: s || op.is_test(),
            rd,
            rn,
            op2: Operand2::Imm {
                value: v,
                rotated: v >= 256,
            },
        }),
        _ if op == DpOp::Mov && !s && value < 0x10000 => Ok(Op::MovHalf {
            top: false,
            rd,
            imm16: value as u16,
        }),
        _ => Err(format!("#{value} is not an A32 immediate")),
    }
}

/// MOVW, MOVT: `rd, #imm16`.
fn move_half(
    base: &str,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    operands(base, o, 2)?;
    let v = imm(&o[1], resolve)?;
    if !(0..0x10000).contains(&v) {
        return Err(format!("{v} does not fit 16 bits"));
    }
    Ok(Op::MovHalf {
        top: base == "movt",
        rd: reg(&o[0])?,
        imm16: v as u16,
    })
}

/// LSL, LSR, ASR, ROR, RRX: a MOV with a shifted register.
fn shift_alias(
    base: &str,
    s: bool,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    let (rd, rm, sh) = match (base, o) {
        ("rrx", [rd, rm]) => (reg(rd)?, reg(rm)?, Shift::Rrx),
        (_, [rd, rm, a]) => (
            reg(rd)?,
            reg(rm)?,
            shift_of(&format!("{base} {a}"), resolve)?,
        ),
        (_, [rd, a]) => (
            reg(rd)?,
            reg(rd)?,
            shift_of(&format!("{base} {a}"), resolve)?,
        ),
        _ => return Err(format!("bad operands for `{base}`")),
    };
    Ok(Op::Dp {
        op: DpOp::Mov,
        s,
        rd,
        rn: 0,
        op2: Operand2::Reg { rm, shift: sh },
    })
}

/// MUL, MLA, MLS and the long multiplies UMULL, SMULL, UMLAL, SMLAL.
fn multiply(base: &str, s: bool, o: &[String]) -> Result<Op, String> {
    Ok(match base {
        "mul" => {
            let (rd, rn, rm) = match o {
                [rd, rn, rm] => (reg(rd)?, reg(rn)?, reg(rm)?),
                [rd, rm] => (reg(rd)?, reg(rd)?, reg(rm)?),
                _ => return Err("`mul` takes 2 or 3 operands".into()),
            };
            Op::Mul {
                s,
                rd,
                rn,
                rm,
                acc: None,
            }
        }
        "mla" | "mls" => {
            operands(base, o, 4)?;
            Op::Mul {
                s,
                rd: reg(&o[0])?,
                rn: reg(&o[1])?,
                rm: reg(&o[2])?,
                acc: Some((reg(&o[3])?, base == "mls")),
            }
        }
        _ => {
            operands(base, o, 4)?;
            Op::MulLong {
                signed: base.starts_with('s'),
                accumulate: base.ends_with("lal"),
                s,
                rdlo: reg(&o[0])?,
                rdhi: reg(&o[1])?,
                rn: reg(&o[2])?,
                rm: reg(&o[3])?,
            }
        }
    })
}

/// UDIV, SDIV: `rd, rn, rm`.
fn divide(base: &str, o: &[String]) -> Result<Op, String> {
    operands(base, o, 3)?;
    Ok(Op::Div {
        signed: base == "sdiv",
        rd: reg(&o[0])?,
        rn: reg(&o[1])?,
        rm: reg(&o[2])?,
    })
}

/// CLZ, RBIT, REV, REV16: `rd, rm`.
fn byte_op(base: &str, o: &[String]) -> Result<Op, String> {
    operands(base, o, 2)?;
    let (rd, rm) = (reg(&o[0])?, reg(&o[1])?);
    Ok(match base {
        "clz" => Op::Clz { rd, rm },
        "rbit" => Op::Rbit { rd, rm },
        "rev" => Op::Rev { rd, rm },
        _ => Op::Rev16 { rd, rm },
    })
}

/// BFC `rd, #lsb, #width`; BFI, UBFX, SBFX `rd, rn, #lsb, #width`.
fn bit_field(
    base: &str,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    let k = if base == "bfc" { 3 } else { 4 };
    operands(base, o, k)?;
    let lsb = imm(&o[k - 2], resolve)?;
    let width = imm(&o[k - 1], resolve)?;
    if !(0..32).contains(&lsb) || width < 1 || lsb + width > 32 {
        return Err(format!("bit field #{lsb}, #{width} out of range"));
    }
    let (lsb, width) = (lsb as u8, width as u8);
    let rd = reg(&o[0])?;
    Ok(match base {
        "bfc" => Op::Bfi {
            rd,
            rn: None,
            lsb,
            width,
        },
        "bfi" => Op::Bfi {
            rd,
            rn: Some(reg(&o[1])?),
            lsb,
            width,
        },
        _ => Op::Bfx {
            signed: base == "sbfx",
            rd,
            rn: reg(&o[1])?,
            lsb,
            width,
        },
    })
}

/// UXTB, UXTH, SXTB, SXTH: `rd, rm{, ror #0|8|16|24}`.
fn extend(
    base: &str,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    let rot = match o {
        [_, _] => 0,
        [_, _, r] => {
            let r = r.trim().to_ascii_lowercase();
            let a = r
                .strip_prefix("ror")
                .ok_or("expected `ror #n`")
                .and_then(|a| imm(a, resolve).map_err(|_| "bad rotation"))?;
            if ![0, 8, 16, 24].contains(&a) {
                return Err("rotation must be 0, 8, 16 or 24".into());
            }
            a as u8
        }
        _ => return Err(format!("bad operands for `{base}`")),
    };
    Ok(Op::Extend {
        signed: base.starts_with('s'),
        size: if base.ends_with('b') {
            Size::Byte
        } else {
            Size::Half
        },
        rd: reg(&o[0])?,
        rm: reg(&o[1])?,
        rot,
    })
}

/// PUSH, POP: `{registers}` (STMDB / LDMIA on sp with write-back).
fn push_pop(base: &str, o: &[String]) -> Result<Op, String> {
    operands(base, o, 1)?;
    Ok(Op::Block {
        load: base == "pop",
        rn: 13,
        regs: reg_list(&o[0])?,
        up: base == "pop",
        before: base == "push",
        writeback: true,
    })
}

/// LDM / STM with a mode suffix (IA, IB, DA, DB, FD): `rn{!}, {registers}`.
fn block(base: &str, o: &[String]) -> Result<Op, String> {
    operands(base, o, 2)?;
    let load = base.starts_with("ldm");
    let (up, before) = match &base[3..] {
        "" | "ia" => (true, false),
        "ib" => (true, true),
        "da" => (false, false),
        "db" => (false, true),
        "fd" if load => (true, false),
        "fd" => (false, true),
        _ => return Err(format!("unknown mode `{base}`")),
    };
    let r0 = o[0].trim();
    let (rn, writeback) = match r0.strip_suffix('!') {
        Some(r) => (reg(r)?, true),
        None => (reg(r0)?, false),
    };
    Ok(Op::Block {
        load,
        rn,
        regs: reg_list(&o[1])?,
        up,
        before,
        writeback,
    })
}

/// B, BL `label`; BX, BLX `rm`.
fn branch(
    base: &str,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    operands(base, o, 1)?;
    Ok(match base {
        "b" | "bl" => {
            let e = parse_expr(&o[0]).ok_or_else(|| format!("bad target `{}`", o[0]))?;
            let t = resolve(&e)?;
            Op::Branch {
                link: base == "bl",
                target: t as u32,
            }
        }
        _ => Op::BranchReg {
            link: base == "blx",
            rm: reg(&o[0])?,
        },
    })
}

/// SVC (SWI) `{#imm}`, and NOP (`mov r0, r0`).
fn system(
    base: &str,
    o: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<Op, String> {
    if base == "nop" {
        return Ok(Op::Dp {
            op: DpOp::Mov,
            s: false,
            rd: 0,
            rn: 0,
            op2: Operand2::Reg {
                rm: 0,
                shift: Shift::None,
            },
        });
    }
    let v = match o {
        [] => 0,
        [v] => imm(v, resolve).or_else(|_| parse_num(v).ok_or("bad svc number".to_string()))?,
        _ => return Err("`svc` takes one operand".into()),
    };
    Ok(Op::Svc {
        imm: (v as u32) & 0x00ff_ffff,
    })
}

/// LDR / STR and friends: `[rn]`, `[rn, #imm]`, `[rn, #imm]!`,
/// `[rn], #imm`, `[rn, ±rm{, shift}]`, `[rn], ±rm`, `=value`, `label`.
fn memory(
    base: &str,
    o: &[String],
    addr: u32,
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
    is_address: &dyn Fn(&Expr) -> bool,
    lit: &mut dyn FnMut(u32) -> u32,
) -> Result<Op, String> {
    let load = base.starts_with("ldr");
    let (size, signed) = match &base[3..] {
        "" => (Size::Word, false),
        "b" => (Size::Byte, false),
        "h" => (Size::Half, false),
        "sb" => (Size::Byte, true),
        _ => (Size::Half, true),
    };
    let rt = reg(o.first().ok_or("missing register")?)?;
    let mem = |rn: Reg, offset: Offset, add: bool, pre: bool, writeback: bool| Op::Mem {
        load,
        size,
        signed,
        rt,
        rn,
        offset,
        add,
        pre,
        writeback,
    };
    let pc_relative = |target: u32| -> Result<Op, String> {
        let off = target as i64 - (addr as i64 + 8);
        let limit = if size == Size::Word || (size == Size::Byte && !signed) {
            4096
        } else {
            256
        };
        if off.abs() >= limit {
            return Err(format!("{target:#x} is out of reach of a pc-relative load"));
        }
        Ok(mem(
            15,
            Offset::Imm(off.unsigned_abs() as u32),
            off >= 0,
            true,
            false,
        ))
    };
    let second = o.get(1).ok_or("missing address")?.trim();
    if let Some(v) = second.strip_prefix('=') {
        if !load || size != Size::Word {
            return Err("`=value` is only for ldr".into());
        }
        let e = parse_expr(v).ok_or_else(|| format!("bad value `{v}`"))?;
        let v = resolve(&e)? as u32;
        // As GNU as does: a MOV or MVN when a constant (not an address) is
        // an immediate.
        if !is_address(&e) {
            if let Some(op) = move_immediate(rt, v) {
                return Ok(op);
            }
        }
        return pc_relative(lit(v));
    }
    if !second.starts_with('[') {
        let e = parse_expr(second).ok_or_else(|| format!("bad address `{second}`"))?;
        return pc_relative(resolve(&e)? as u32);
    }
    let (inside, after) = second
        .strip_prefix('[')
        .and_then(|s| s.split_once(']'))
        .ok_or_else(|| format!("bad address `{second}`"))?;
    let after = after.trim();
    let parts = split_operands(inside);
    let rn = reg(parts.first().ok_or("missing base register")?)?;
    if o.len() > 2 {
        // Post-indexed: `[rn], offset`.
        if !after.is_empty() || parts.len() != 1 {
            return Err("bad post-indexed address".into());
        }
        let (offset, add) = offset_of(&o[2..], resolve)?;
        return Ok(mem(rn, offset, add, false, true));
    }
    let writeback = match after {
        "" => false,
        "!" => true,
        _ => return Err(format!("unexpected `{after}`")),
    };
    let (offset, add) = offset_of(&parts[1..], resolve)?;
    Ok(mem(rn, offset, add, true, writeback))
}

/// `ldr rt, =v` as a MOV or MVN of an immediate, when `v` or `!v` is one.
fn move_immediate(rt: Reg, v: u32) -> Option<Op> {
    [(DpOp::Mov, v), (DpOp::Mvn, !v)]
        .into_iter()
        .find(|&(_, x)| encode_imm(x, x >= 256).is_some())
        .map(|(op, x)| Op::Dp {
            op,
            s: false,
            rd: rt,
            rn: 0,
            op2: Operand2::Imm {
                value: x,
                rotated: x >= 256,
            },
        })
}

/// The offset of an address (`#imm`, `±rm`, `±rm, shift #n`, or nothing)
/// and whether it is added.
fn offset_of(
    parts: &[String],
    resolve: &dyn Fn(&Expr) -> Result<i64, String>,
) -> Result<(Offset, bool), String> {
    match parts {
        [] => Ok((Offset::Imm(0), true)),
        [x, rest @ ..] => {
            let x = x.trim();
            if x.starts_with('#') {
                if !rest.is_empty() {
                    return Err("an immediate offset takes no shift".into());
                }
                let v = imm(x, resolve)?;
                Ok((
                    Offset::Imm(v.unsigned_abs() as u32),
                    v >= 0 && !x.starts_with("#-"),
                ))
            } else {
                let (add, r) = match x.strip_prefix('-') {
                    Some(r) => (false, r),
                    None => (true, x.strip_prefix('+').unwrap_or(x)),
                };
                let shift = match rest {
                    [] => Shift::None,
                    [s] => shift_of(s, resolve)?,
                    _ => return Err("too many operands".into()),
                };
                if matches!(shift, Shift::Reg(..)) {
                    return Err("an offset register takes a shift by an immediate".into());
                }
                Ok((Offset::Reg { rm: reg(r)?, shift }, add))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The disassembly of random decodable words assembles back to the
    /// same instruction.
    #[test]
    fn disassembly_assembles_back() {
        let mut seen = 0;
        for (_, i) in crate::decode::random_instructions(0x9e37_79b9_7f4a_7c15, 300_000, TEXT_BASE)
        {
            if matches!(i.op, Op::Branch { .. }) {
                continue;
            }
            seen += 1;
            let text = format!("{i}");
            let img = assemble(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let got = img.code[&TEXT_BASE];
            // The same operation; immediates may choose another rotation
            // only when the value is below 256 (then both are unrotated).
            assert_eq!(decode(TEXT_BASE, encode(TEXT_BASE, &got).unwrap()), Ok(got));
            let same = got == i
                || matches!((got.op, i.op), (Op::Dp { op2: Operand2::Imm { value: a, .. }, .. }, Op::Dp { op2: Operand2::Imm { value: b, .. }, .. }) if a == b);
            assert!(same, "{text}: {got}");
        }
        assert!(seen > 30_000, "{seen}");
    }

    /// A compare whose immediate is no A32 immediate becomes the
    /// complementary compare, still a compare (S set): the words GNU as
    /// writes for these lines.
    #[test]
    fn compares_with_negated_immediates() {
        let img = assemble("cmp r1, #-1\ncmn r2, #-5\n").unwrap();
        let words: Vec<u32> = img
            .code
            .iter()
            .map(|(&a, i)| encode(a, i).unwrap())
            .collect();
        assert_eq!(words, [0xe371_0001, 0xe352_0005]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = assemble("mov r0, #1\nfoo r1, r2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown instruction"), "{e}");
        let e = assemble("mov r0, #0x12345\n").unwrap_err();
        assert!(e.message.contains("not an A32 immediate"), "{e}");
        let e = assemble("b nowhere\n").unwrap_err();
        assert!(e.message.contains("undefined symbol"), "{e}");
        let e = assemble("x:\nx:\nmov r0, r1\n").unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        assert!(assemble("").is_err());
        assert!(assemble(".data\n.word 1\n").is_err());
    }

    /// Mangled programs never panic: random edits of a valid program
    /// (characters dropped, duplicated or replaced) assemble or fail with
    /// an error.
    #[test]
    fn mangled_text_never_panics() {
        let good = "_start:\n ldr r1, =buf\n ldr r0, [r1, #4]!\n push {r4-r6, lr}\n movgt r2, r3, lsl #3\n b _start\n .data\nbuf: .word 1, buf+4\n .asciz \"a\\n\"\n .align 2\n";
        assert!(assemble(good).is_ok());
        let chars: Vec<char> = "#[]{},!=-+:.@rR0123456789xabslpc \n\"\\".chars().collect();
        let mut x = 7u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..20_000 {
            let mut t: Vec<char> = good.chars().collect();
            for _ in 0..1 + next(4) {
                let i = next(t.len());
                match next(3) {
                    0 => {
                        t.remove(i);
                    }
                    1 => t.insert(i, t[i]),
                    _ => t[i] = chars[next(chars.len())],
                }
            }
            let _ = assemble(&t.iter().collect::<String>());
        }
    }
}
