//! A32 assembly text (the usual unified syntax, the supported subset) to
//! an [`Image`]: code from 0x10000 (`.text`), a literal pool after it for
//! `ldr rX, =value`, data from 0x20000 (`.data`, `.bss`), entry at
//! `_start` (else the first instruction). Each line is an instruction, a
//! label (`name:`), or a directive: `.word`, `.hword`, `.short`, `.byte`,
//! `.space`/`.skip`, `.align`, `.ascii`, `.asciz`, `.equ`/`.set`; `.global`,
//! `.syntax`, `.arm`, `.type`, `.size` are accepted and ignored.
//! Comments start with `@` or `//`.

use std::collections::{BTreeMap, HashMap};

use crate::decode::decode;
use crate::encode::{encode, encode_imm};
use crate::image::Image;
use crate::isa::{Cond, DpOp, Instr, Offset, Op, Operand2, Reg, Shift, ShiftKind, Size};

pub const TEXT_BASE: u32 = 0x10000;
pub const DATA_BASE: u32 = 0x20000;

/// Where the code and the data go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bases {
    pub text: u32,
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
    pub line: usize,
    pub text: String,
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

/// Assembles `text` into an image with its code and data at `bases`.
pub fn assemble_at(text: &str, bases: Bases) -> Result<Image, AsmError> {
    let (text_base, data_base) = (bases.text, bases.data);
    if data_base < text_base.saturating_add(0x1000) {
        return Err(AsmError {
            line: 0,
            text: String::new(),
            message: "the data must start at least 4 KiB after the code".into(),
        });
    }
    // Pass 1: items with addresses, labels.
    let mut items: Vec<(usize, String, Section, u32, Item)> = Vec::new();
    let mut symbols: HashMap<String, i64> = HashMap::new();
    let mut labels: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut at = [text_base, data_base];
    let mut section = Section::Text;
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |m: &str| AsmError {
            line: line_no,
            text: raw.trim().to_string(),
            message: m.to_string(),
        };
        let mut line = strip_comment(raw).trim();
        while let Some(i) = line.find(':') {
            let label = line[..i].trim();
            if label.is_empty() || label.contains(char::is_whitespace) || line[..i].contains('"') {
                break;
            }
            let addr = at[section as usize] as i64;
            if symbols.insert(label.to_string(), addr).is_some() {
                return Err(err(&format!("label `{label}` defined twice")));
            }
            labels.insert(label.to_string());
            line = line[i + 1..].trim();
        }
        if line.is_empty() {
            continue;
        }
        let (head, rest) = match line.find(char::is_whitespace) {
            Some(i) => (&line[..i], line[i..].trim()),
            None => (line, ""),
        };
        let head_l = head.to_ascii_lowercase();
        let cur = &mut at[section as usize];
        let item = match head_l.as_str() {
            ".text" => {
                section = Section::Text;
                continue;
            }
            ".data" | ".bss" => {
                section = Section::Data;
                continue;
            }
            ".section" => {
                section = if rest.starts_with(".text") {
                    Section::Text
                } else {
                    Section::Data
                };
                continue;
            }
            ".global" | ".globl" | ".syntax" | ".arm" | ".code" | ".type" | ".size" | ".file"
            | ".fpu" | ".cpu" | ".arch" | ".p2align_" => continue,
            ".equ" | ".set" => {
                let ops = split_operands(rest);
                let [name, value] = ops.as_slice() else {
                    return Err(err("expected `.equ name, value`"));
                };
                let v = parse_num(value).ok_or_else(|| err("expected a number"))?;
                symbols.insert(name.clone(), v);
                continue;
            }
            ".word" | ".long" | ".4byte" | ".hword" | ".short" | ".2byte" | ".byte" => {
                let size = match head_l.as_str() {
                    ".word" | ".long" | ".4byte" => 4,
                    ".byte" => 1,
                    _ => 2,
                };
                let exprs = split_operands(rest)
                    .iter()
                    .map(|e| parse_expr(e).ok_or_else(|| err(&format!("bad value `{e}`"))))
                    .collect::<Result<Vec<_>, _>>()?;
                Item::Bytes(exprs, size)
            }
            ".ascii" | ".asciz" | ".string" => {
                let s = rest.trim();
                let inner = s
                    .strip_prefix('"')
                    .and_then(|s| s.strip_suffix('"'))
                    .ok_or_else(|| err("expected a quoted string"))?;
                let mut bytes: Vec<Expr> = unescape(inner)
                    .map_err(|m| err(&m))?
                    .into_iter()
                    .map(|b| Expr::Num(b as i64))
                    .collect();
                if head_l != ".ascii" {
                    bytes.push(Expr::Num(0));
                }
                Item::Bytes(bytes, 1)
            }
            ".space" | ".skip" | ".zero" => {
                let n = parse_num(split_operands(rest).first().map_or("", |s| s))
                    .filter(|&n| (0..1 << 24).contains(&n))
                    .ok_or_else(|| err("expected a size below 16 MiB"))?;
                Item::Space(n as u32)
            }
            ".align" | ".balign" | ".p2align" => {
                let n = parse_num(rest).ok_or_else(|| err("expected a number"))?;
                let bytes = if head_l == ".balign" {
                    n
                } else {
                    1 << n.clamp(0, 12)
                };
                if bytes <= 0 || bytes & (bytes - 1) != 0 || bytes > 4096 {
                    return Err(err("alignment must be a power of two up to 4096"));
                }
                Item::Align(bytes as u32)
            }
            h if h.starts_with('.') => return Err(err(&format!("unknown directive `{h}`"))),
            _ => {
                if section != Section::Text {
                    return Err(err("instructions belong in .text"));
                }
                if !cur.is_multiple_of(4) {
                    return Err(err("instruction not word-aligned"));
                }
                Item::Instr(head_l.clone(), rest.to_string())
            }
        };
        let size = match &item {
            Item::Instr(..) => 4,
            Item::Bytes(v, s) => (v.len() * s) as u32,
            Item::Space(n) => *n,
            Item::Align(a) => (a - *cur % a) % a,
        };
        items.push((line_no, raw.trim().to_string(), section, *cur, item));
        *cur = cur
            .checked_add(size)
            .filter(|&e| {
                let base = if section == Section::Text {
                    text_base
                } else {
                    data_base
                };
                e - base < 1 << 24
            })
            .ok_or_else(|| err("section larger than 16 MiB"))?;
    }
    let text_end = at[0];
    if text_end > data_base {
        return Err(AsmError {
            line: 0,
            text: String::new(),
            message: format!("the code runs into the data at {data_base:#x}"),
        });
    }
    // Pass 2: encode, collecting the literal pool after the code.
    let pool_base = (text_end + 3) & !3;
    let mut pool: Vec<u32> = Vec::new();
    let mut rom: BTreeMap<u32, u8> = BTreeMap::new();
    let mut data: Vec<u8> = Vec::new();
    let mut code: BTreeMap<u32, Instr> = BTreeMap::new();
    let resolve = |e: &Expr| -> Result<i64, String> {
        match e {
            Expr::Num(v) => Ok(*v),
            Expr::Sym(s, off) => symbols
                .get(s)
                .map(|v| v + off)
                .ok_or_else(|| format!("undefined symbol `{s}`")),
        }
    };
    let is_address = |e: &Expr| matches!(e, Expr::Sym(s, _) if labels.contains(s));
    for (line, text, section, addr, item) in &items {
        let err = |m: String| AsmError {
            line: *line,
            text: text.clone(),
            message: m,
        };
        let mut put = |addr: u32, bytes: &[u8], data: &mut Vec<u8>| match section {
            Section::Text => {
                for (k, &b) in bytes.iter().enumerate() {
                    rom.insert(addr + k as u32, b);
                }
            }
            Section::Data => {
                let off = (addr - data_base) as usize;
                if data.len() < off + bytes.len() {
                    data.resize(off + bytes.len(), 0);
                }
                data[off..off + bytes.len()].copy_from_slice(bytes);
            }
        };
        match item {
            Item::Instr(m, ops) => {
                let mut lit = |v: u32| -> u32 {
                    let i = pool.iter().position(|&p| p == v).unwrap_or_else(|| {
                        pool.push(v);
                        pool.len() - 1
                    });
                    pool_base + 4 * i as u32
                };
                let instr =
                    parse_instr(m, ops, *addr, &resolve, &is_address, &mut lit).map_err(err)?;
                let word = encode(*addr, &instr).map_err(err)?;
                let back = decode(*addr, word).map_err(|e| err(e.to_string()))?;
                code.insert(*addr, back);
                put(*addr, &word.to_le_bytes(), &mut data);
            }
            Item::Bytes(exprs, size) => {
                let mut bytes = Vec::new();
                for e in exprs {
                    let v = resolve(e).map_err(err)?;
                    let fits = match size {
                        1 => (-128..256).contains(&v),
                        2 => (-32768..65536).contains(&v),
                        _ => (-(1i64 << 31)..(1i64 << 32)).contains(&v),
                    };
                    if !fits {
                        return Err(err(format!("{v} does not fit {size} byte(s)")));
                    }
                    bytes.extend_from_slice(&(v as u32).to_le_bytes()[..*size]);
                }
                put(*addr, &bytes, &mut data);
            }
            Item::Space(n) => put(*addr, &vec![0; *n as usize], &mut data),
            Item::Align(_) => {}
        }
    }
    for (i, v) in pool.iter().enumerate() {
        for (k, b) in v.to_le_bytes().iter().enumerate() {
            rom.insert(pool_base + 4 * i as u32 + k as u32, *b);
        }
    }
    if code.is_empty() {
        return Err(AsmError {
            line: 0,
            text: String::new(),
            message: "no instructions".into(),
        });
    }
    let end = rom.keys().next_back().map_or(text_base, |&a| a + 1);
    let mut bytes = vec![0u8; (end - text_base) as usize];
    for (a, b) in rom {
        bytes[(a - text_base) as usize] = b;
    }
    let entry = symbols
        .get("_start")
        .map(|&v| v as u32)
        .unwrap_or_else(|| *code.keys().next().expect("code is not empty"));
    let mut image = Image {
        entry,
        code,
        data_base,
        data,
        ..Image::default()
    };
    image.rom.insert(text_base, bytes);
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

/// Parses one instruction at `addr`; `lit` places a literal-pool word.
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
    let n = |k: usize| -> Result<(), String> {
        if o.len() == k {
            Ok(())
        } else {
            Err(format!("`{base}` takes {k} operands, got {}", o.len()))
        }
    };
    let dp_ops = [
        "and", "eor", "sub", "rsb", "add", "adc", "sbc", "rsc", "tst", "teq", "cmp", "cmn", "orr",
        "mov", "bic", "mvn",
    ];
    let op = if let Some(code) = dp_ops.iter().position(|&d| d == base) {
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
        // Immediates that do not fit: the complementary operation, or
        // MOVW for a 16-bit constant.
        if let Operand2::Imm { value, .. } = op2 {
            if encode_imm(value, value >= 256).is_none() {
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
                    Some((op, v)) if encode_imm(v, v >= 256).is_some() => {
                        return Ok(Instr {
                            cond,
                            op: Op::Dp {
                                op,
                                s,
                                rd,
                                rn,
                                op2: Operand2::Imm {
                                    value: v,
                                    rotated: v >= 256,
                                },
                            },
                        })
                    }
                    _ if op == DpOp::Mov && !s && value < 0x10000 => {
                        return Ok(Instr {
                            cond,
                            op: Op::MovHalf {
                                top: false,
                                rd,
                                imm16: value as u16,
                            },
                        })
                    }
                    _ => return Err(format!("#{value} is not an A32 immediate")),
                }
            }
        }
        Op::Dp {
            op,
            s: s || op.is_test(),
            rd,
            rn,
            op2,
        }
    } else {
        match base {
            "movw" | "movt" => {
                n(2)?;
                let v = imm(&o[1], resolve)?;
                if !(0..0x10000).contains(&v) {
                    return Err(format!("{v} does not fit 16 bits"));
                }
                Op::MovHalf {
                    top: base == "movt",
                    rd: reg(&o[0])?,
                    imm16: v as u16,
                }
            }
            "lsl" | "lsr" | "asr" | "ror" | "rrx" => {
                let (rd, rm, sh) = match (base, o.as_slice()) {
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
                Op::Dp {
                    op: DpOp::Mov,
                    s,
                    rd,
                    rn: 0,
                    op2: Operand2::Reg { rm, shift: sh },
                }
            }
            "mul" => {
                let (rd, rn, rm) = match o.as_slice() {
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
                n(4)?;
                Op::Mul {
                    s,
                    rd: reg(&o[0])?,
                    rn: reg(&o[1])?,
                    rm: reg(&o[2])?,
                    acc: Some((reg(&o[3])?, base == "mls")),
                }
            }
            "umull" | "smull" | "umlal" | "smlal" => {
                n(4)?;
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
            "udiv" | "sdiv" => {
                n(3)?;
                Op::Div {
                    signed: base == "sdiv",
                    rd: reg(&o[0])?,
                    rn: reg(&o[1])?,
                    rm: reg(&o[2])?,
                }
            }
            "clz" | "rbit" | "rev" | "rev16" => {
                n(2)?;
                let (rd, rm) = (reg(&o[0])?, reg(&o[1])?);
                match base {
                    "clz" => Op::Clz { rd, rm },
                    "rbit" => Op::Rbit { rd, rm },
                    "rev" => Op::Rev { rd, rm },
                    _ => Op::Rev16 { rd, rm },
                }
            }
            "bfc" | "bfi" | "ubfx" | "sbfx" => {
                let k = if base == "bfc" { 3 } else { 4 };
                n(k)?;
                let lsb = imm(&o[k - 2], resolve)?;
                let width = imm(&o[k - 1], resolve)?;
                if !(0..32).contains(&lsb) || width < 1 || lsb + width > 32 {
                    return Err(format!("bit field #{lsb}, #{width} out of range"));
                }
                let (lsb, width) = (lsb as u8, width as u8);
                let rd = reg(&o[0])?;
                match base {
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
                }
            }
            "uxtb" | "uxth" | "sxtb" | "sxth" => {
                let rot = match o.as_slice() {
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
                Op::Extend {
                    signed: base.starts_with('s'),
                    size: if base.ends_with('b') {
                        Size::Byte
                    } else {
                        Size::Half
                    },
                    rd: reg(&o[0])?,
                    rm: reg(&o[1])?,
                    rot,
                }
            }
            "ldr" | "str" | "ldrb" | "strb" | "ldrh" | "strh" | "ldrsb" | "ldrsh" => {
                memory(base, &o, addr, resolve, is_address, lit)?
            }
            "push" | "pop" => {
                n(1)?;
                Op::Block {
                    load: base == "pop",
                    rn: 13,
                    regs: reg_list(&o[0])?,
                    up: base == "pop",
                    before: base == "push",
                    writeback: true,
                }
            }
            b if b.starts_with("ldm") || b.starts_with("stm") => {
                n(2)?;
                let load = b.starts_with("ldm");
                let (up, before) = match &b[3..] {
                    "" | "ia" => (true, false),
                    "ib" => (true, true),
                    "da" => (false, false),
                    "db" => (false, true),
                    "fd" if load => (true, false),
                    "fd" => (false, true),
                    _ => return Err(format!("unknown mode `{b}`")),
                };
                let r0 = o[0].trim();
                let (rn, writeback) = match r0.strip_suffix('!') {
                    Some(r) => (reg(r)?, true),
                    None => (reg(r0)?, false),
                };
                Op::Block {
                    load,
                    rn,
                    regs: reg_list(&o[1])?,
                    up,
                    before,
                    writeback,
                }
            }
            "b" | "bl" => {
                n(1)?;
                let e = parse_expr(&o[0]).ok_or_else(|| format!("bad target `{}`", o[0]))?;
                let t = resolve(&e)?;
                Op::Branch {
                    link: base == "bl",
                    target: t as u32,
                }
            }
            "bx" | "blx" => {
                n(1)?;
                Op::BranchReg {
                    link: base == "blx",
                    rm: reg(&o[0])?,
                }
            }
            "svc" | "swi" => {
                let v = match o.as_slice() {
                    [] => 0,
                    [v] => imm(v, resolve)
                        .or_else(|_| parse_num(v).ok_or("bad svc number".to_string()))?,
                    _ => return Err("`svc` takes one operand".into()),
                };
                Op::Svc {
                    imm: (v as u32) & 0x00ff_ffff,
                }
            }
            "nop" => Op::Dp {
                op: DpOp::Mov,
                s: false,
                rd: 0,
                rn: 0,
                op2: Operand2::Reg {
                    rm: 0,
                    shift: Shift::None,
                },
            },
            _ => return Err(format!("unknown instruction `{m}`")),
        }
    };
    Ok(Instr { cond, op })
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
        let constant = !is_address(&e);
        for (op, x) in [(DpOp::Mov, v), (DpOp::Mvn, !v)]
            .into_iter()
            .filter(|_| constant)
        {
            if encode_imm(x, x >= 256).is_some() {
                return Ok(Op::Dp {
                    op,
                    s: false,
                    rd: rt,
                    rn: 0,
                    op2: Operand2::Imm {
                        value: x,
                        rotated: x >= 256,
                    },
                });
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
    let offset_of = |parts: &[String]| -> Result<(Offset, bool), String> {
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
    };
    if o.len() > 2 {
        // Post-indexed: `[rn], offset`.
        if !after.is_empty() || parts.len() != 1 {
            return Err("bad post-indexed address".into());
        }
        let (offset, add) = offset_of(&o[2..])?;
        return Ok(mem(rn, offset, add, false, true));
    }
    let writeback = match after {
        "" => false,
        "!" => true,
        _ => return Err(format!("unexpected `{after}`")),
    };
    let (offset, add) = offset_of(&parts[1..])?;
    Ok(mem(rn, offset, add, true, writeback))
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
