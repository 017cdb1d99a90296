//! A program image: clear read-only memory (code, literal pools, constant
//! data), its decoded instructions, and the initial data memory; loaded
//! from a 32-bit little-endian ARM ELF executable.

use std::collections::{BTreeMap, HashMap};

use crate::decode::{decode, Unsupported};
use crate::isa::Instr;

/// Why a program could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not an ELF file.
    #[error("not an ELF file")]
    NotElf,
    /// A truncated or malformed ELF file, or segments out of bounds.
    #[error("truncated or malformed ELF file: {0}")]
    Malformed(String),
    /// An ELF file of another kind (class, machine, endianness, type).
    #[error("unsupported ELF file: {0}")]
    Unsupported(String),
    /// Instructions the emulator does not run: all of them, before anything runs.
    #[error("{} unsupported instruction(s), first: {}", .0.len(), .0[0])]
    Instructions(Vec<Unsupported>),
    /// Assembly text that does not assemble.
    #[error("assembly: {0}")]
    Asm(#[from] crate::asm::AsmError),
    /// Neither ELF nor UTF-8 text.
    #[error("neither an ELF file nor UTF-8 assembly text")]
    NotText,
}

/// The largest data memory a program may declare (each byte is an
/// encrypted value: 8 ciphertexts).
pub const MAX_DATA: u32 = 1 << 22;

/// The most code a program may declare: the executable segments' memory
/// sizes added up (256 Ki instructions; every code word is decoded when
/// the file is loaded, so a few bytes of ELF header asking for 64 MiB of
/// zero-filled code cost seconds and most of a gigabyte).
pub const MAX_CODE: u32 = 1 << 20;

/// A loaded program.
#[derive(Clone, Debug, Default)]
pub struct Image {
    /// The address execution starts at.
    pub entry: u32,
    /// Clear read-only memory: start address -> bytes.
    pub rom: BTreeMap<u32, Vec<u8>>,
    /// The instructions, by address.
    pub code: BTreeMap<u32, Instr>,
    /// Where the data memory starts, and its initial bytes (writable
    /// segments, zero-filled beyond their file contents).
    pub data_base: u32,
    /// The data memory's initial bytes.
    pub data: Vec<u8>,
    /// Addresses of the ELF's (or the assembly's) symbols, by name.
    pub symbols: HashMap<String, u32>,
}

impl Image {
    /// The clear read-only byte at `addr`, if any.
    pub fn rom_byte(&self, addr: u32) -> Option<u8> {
        let (&start, bytes) = self.rom.range(..=addr).next_back()?;
        bytes.get((addr - start) as usize).copied()
    }

    /// An ELF executable (by its magic number) or assembly text
    /// ([`crate::asm::assemble`]).
    pub fn load(file: &[u8]) -> Result<Image, LoadError> {
        Image::load_for(file, crate::machine::Width::W32)
    }

    /// [`Image::load`] for a machine of `width`: assembly text goes below
    /// 64 KiB ([`crate::asm::BASES_16`]) in the 16-bit mode.
    pub fn load_for(file: &[u8], width: crate::machine::Width) -> Result<Image, LoadError> {
        if file.starts_with(b"\x7fELF") {
            return Image::from_elf(file);
        }
        let text = std::str::from_utf8(file).map_err(|_| LoadError::NotText)?;
        let bases = match width {
            crate::machine::Width::W32 => crate::asm::BASES,
            crate::machine::Width::W16 => crate::asm::BASES_16,
        };
        Ok(crate::asm::assemble_at(text, bases)?)
    }

    /// Loads an ELF executable: every `PT_LOAD` segment, code found by the
    /// ARM mapping symbols (`$a` code, `$d` data; without them every word
    /// of an executable segment is code). Every code word is decoded now:
    /// an instruction outside the subset fails the load, with all such
    /// instructions listed.
    pub fn from_elf(file: &[u8]) -> Result<Image, LoadError> {
        let elf = Elf { file };
        if file.len() < 52 || &file[..4] != b"\x7fELF" {
            return Err(LoadError::NotElf);
        }
        if file[4] != 1 || file[5] != 1 {
            return Err(LoadError::Unsupported(
                "only 32-bit little-endian files".into(),
            ));
        }
        if elf.u16(18)? != 40 {
            return Err(LoadError::Unsupported(format!(
                "machine {} is not ARM (40)",
                elf.u16(18)?
            )));
        }
        if elf.u16(16)? != 2 {
            return Err(LoadError::Unsupported("not an executable (ET_EXEC)".into()));
        }
        let entry = elf.u32(24)?;
        let (phoff, shoff) = (elf.u32(28)? as usize, elf.u32(32)? as usize);
        let (phentsize, phnum) = (elf.u16(42)? as usize, elf.u16(44)? as usize);
        let (shentsize, shnum) = (elf.u16(46)? as usize, elf.u16(48)? as usize);
        if phnum > 0 && phentsize < 32 {
            return Err(LoadError::Malformed("program header size".into()));
        }
        let mut image = Image {
            entry,
            ..Image::default()
        };
        let mut exec: Vec<(u32, u32)> = Vec::new();
        let mut data: Vec<(u32, Vec<u8>)> = Vec::new();
        let (mut total, mut code) = (0u64, 0u64);
        for i in 0..phnum {
            let h = phoff
                .checked_add(i.checked_mul(phentsize).ok_or_else(too_big)?)
                .ok_or_else(too_big)?;
            if elf.u32(h)? != 1 {
                continue;
            }
            let (off, vaddr) = (elf.u32(h + 4)? as usize, elf.u32(h + 8)?);
            let (filesz, memsz, flags) = (elf.u32(h + 16)?, elf.u32(h + 20)?, elf.u32(h + 24)?);
            total += memsz as u64;
            if filesz > memsz || total > 1 << 26 || vaddr.checked_add(memsz).is_none() {
                return Err(LoadError::Malformed(format!(
                    "segment {i} sizes (at most 64 MiB in all)"
                )));
            }
            let mut bytes = elf.bytes(off, filesz as usize)?.to_vec();
            bytes.resize(memsz as usize, 0);
            if flags & 2 != 0 {
                data.push((vaddr, bytes));
            } else {
                if flags & 1 != 0 {
                    code += memsz as u64;
                    if code > MAX_CODE as u64 {
                        return Err(LoadError::Unsupported(format!(
                            "{code} bytes of code or more (at most {MAX_CODE})"
                        )));
                    }
                    exec.push((vaddr, vaddr + memsz));
                }
                image.rom.insert(vaddr, bytes);
            }
        }
        if exec.is_empty() {
            return Err(LoadError::Malformed("no executable segment".into()));
        }
        // One data memory spanning the writable segments.
        if let (Some(lo), Some(hi)) = (
            data.iter().map(|d| d.0).min(),
            data.iter().map(|d| d.0 + d.1.len() as u32).max(),
        ) {
            if hi - lo > MAX_DATA {
                return Err(LoadError::Unsupported(format!(
                    "a data memory of {} bytes (at most {MAX_DATA})",
                    hi - lo
                )));
            }
            image.data_base = lo;
            image.data = vec![0; (hi - lo) as usize];
            for (at, bytes) in &data {
                let s = (at - lo) as usize;
                image.data[s..s + bytes.len()].copy_from_slice(bytes);
            }
        }
        let mapping = elf.symbols(shoff, shentsize, shnum, &mut image.symbols)?;
        image.decode_code(&exec, &mapping)?;
        Ok(image)
    }

    /// Decodes the code words of the executable ranges.
    fn decode_code(
        &mut self,
        exec: &[(u32, u32)],
        mapping: &BTreeMap<u32, char>,
    ) -> Result<(), LoadError> {
        let mut bad = Vec::new();
        for &(lo, hi) in exec {
            let mut addr = lo;
            while addr.checked_add(4).is_some_and(|end| end <= hi) {
                let is_code = if mapping.is_empty() {
                    true
                } else {
                    mapping.range(..=addr).next_back().map(|(_, &k)| k) == Some('a')
                };
                if is_code {
                    let word = self.rom_word(addr).ok_or_else(|| {
                        LoadError::Malformed(format!("overlapping segments at {addr:#x}"))
                    })?;
                    match decode(addr, word) {
                        Ok(i) => {
                            self.code.insert(addr, i);
                        }
                        Err(e) => bad.push(e),
                    }
                }
                addr += 4;
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(LoadError::Instructions(bad))
        }
    }

    /// The clear read-only little-endian word at `addr`.
    pub fn rom_word(&self, addr: u32) -> Option<u32> {
        let mut w = 0u32;
        for k in 0..4 {
            w |= (self.rom_byte(addr.checked_add(k)?)? as u32) << (8 * k);
        }
        Some(w)
    }
}

fn too_big() -> LoadError {
    LoadError::Malformed("header offsets overflow".into())
}

struct Elf<'a> {
    file: &'a [u8],
}

impl Elf<'_> {
    fn bytes(&self, off: usize, len: usize) -> Result<&[u8], LoadError> {
        off.checked_add(len)
            .and_then(|end| self.file.get(off..end))
            .ok_or_else(|| LoadError::Malformed(format!("{len} bytes at offset {off}")))
    }

    fn u16(&self, off: usize) -> Result<u16, LoadError> {
        let b = self.bytes(off, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&self, off: usize) -> Result<u32, LoadError> {
        let b = self.bytes(off, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn name(&self, strtab: (usize, usize), at: u32) -> Result<String, LoadError> {
        let (off, size) = strtab;
        let s = self.bytes(off, size)?;
        let tail = s
            .get(at as usize..)
            .ok_or_else(|| LoadError::Malformed("symbol name offset".into()))?;
        let end = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
        Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
    }

    /// Reads the symbol table into `symbols`; returns the ARM mapping
    /// symbols (`$a` / `$d` / `$t`) by address.
    fn symbols(
        &self,
        shoff: usize,
        shentsize: usize,
        shnum: usize,
        symbols: &mut HashMap<String, u32>,
    ) -> Result<BTreeMap<u32, char>, LoadError> {
        let mut mapping = BTreeMap::new();
        if shoff == 0 || shnum == 0 {
            return Ok(mapping);
        }
        if shentsize < 40 {
            return Err(LoadError::Malformed("section header size".into()));
        }
        let sh = |i: usize| shoff + i * shentsize;
        for i in 0..shnum {
            if self.u32(sh(i) + 4)? != 2 {
                continue;
            }
            let (off, size) = (
                self.u32(sh(i) + 16)? as usize,
                self.u32(sh(i) + 20)? as usize,
            );
            let link = self.u32(sh(i) + 24)? as usize;
            if link >= shnum {
                return Err(LoadError::Malformed("symbol table link".into()));
            }
            let strtab = (
                self.u32(sh(link) + 16)? as usize,
                self.u32(sh(link) + 20)? as usize,
            );
            for k in 0..size / 16 {
                let e = off + 16 * k;
                let name = self.name(strtab, self.u32(e)?)?;
                let value = self.u32(e + 4)?;
                if let Some(kind) = name.strip_prefix('$').and_then(|n| n.chars().next()) {
                    if name.len() == 2 || name.as_bytes().get(2) == Some(&b'.') {
                        mapping.insert(value, kind);
                        continue;
                    }
                }
                if !name.is_empty() {
                    symbols.insert(name, value);
                }
            }
        }
        Ok(mapping)
    }
}
