//! Kreyvium (Canteaut, Carpov, Fontaine, Lepoint, Naya-Plasencia, Paillier,
//! Sirdey, FSE 2016): Trivium's 288-bit state with a 128-bit key and IV,
//! both also held in registers that rotate and feed one bit per round into
//! the state. Written from the cipher's specification; checked against the
//! authors' published test vectors.
//!
//! A round, with the state `s[1..=288]` and the registers' current bits
//! `k` and `v`:
//!
//! ```text
//! t1 = s66 + s93            t2 = s162 + s177          t3 = s243 + s288 + k
//! z  = t1 + t2 + t3                                   (the keystream bit)
//! t1 += s91 s92 + s171 + v  t2 += s175 s176 + s264    t3 += s286 s287 + s69
//! s[1..=93] <- (t3, s1..s92)  s[94..=177] <- (t1, s94..s176)  s[178..=288] <- (t2, s178..s287)
//! ```
//!
//! After loading, 1 152 rounds run without output (the warm-up).
//!
//! Bytes carry bits as the published vectors write them ([`bits_of`],
//! [`bytes_of`]).

/// Rounds run after loading, before the first keystream bit.
pub const WARM_UP: usize = 1152;

/// The state's length.
pub const STATE: usize = 288;

/// The bits one round reads (the specification's 1-based numbering of
/// the state), of any kind: clear or encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taps<T> {
    /// `s66, s93`: `t1`'s linear part.
    pub t1: [T; 2],
    /// `s162, s177`.
    pub t2: [T; 2],
    /// `s243, s288`.
    pub t3: [T; 2],
    /// `s91, s92`: the product added to `t1`.
    pub and1: [T; 2],
    /// `s175, s176`.
    pub and2: [T; 2],
    /// `s286, s287`.
    pub and3: [T; 2],
    /// `s171`, `s264`, `s69`: added to `t1`, `t2`, `t3`.
    pub add: [T; 3],
    /// The key register's bit `K*_0`.
    pub k: T,
    /// The IV register's bit `IV*_0`.
    pub v: T,
}

/// A shift register: every round shifts one bit in at index 0 and the
/// last falls out. A ring, so a round moves nothing.
#[derive(Clone, Debug)]
struct Register<T> {
    bits: Vec<T>,
    /// Where index 0 is.
    start: usize,
}

impl<T: Copy> Register<T> {
    fn new(bits: Vec<T>) -> Self {
        Register { bits, start: 0 }
    }

    fn get(&self, i: usize) -> T {
        self.bits[(self.start + i) % self.bits.len()]
    }

    fn push_front(&mut self, x: T) {
        let n = self.bits.len();
        self.start = (self.start + n - 1) % n;
        self.bits[self.start] = x;
    }

    /// Rotates by one: index 0 goes to the end (the specification's
    /// `K*` and `IV*`: `K*_0` is read, then becomes `K*_127`).
    fn rotate(&mut self) {
        self.start = (self.start + 1) % self.bits.len();
    }
}

/// Kreyvium's whole state, of clear or encrypted bits: the three parts of
/// the 288-bit state (`s1..s93`, `s94..s177`, `s178..s288`) and the key
/// and IV registers.
#[derive(Clone, Debug)]
pub struct State<T> {
    a: Register<T>,
    b: Register<T>,
    c: Register<T>,
    key: Register<T>,
    iv: Register<T>,
}

impl<T: Copy> State<T> {
    /// The state as loaded, before the warm-up: `s1..s93 = K1..K93`,
    /// `s94..s177 = IV1..IV84`, `s178..s288 = IV85..IV128, 1, .., 1, 0`,
    /// and the registers `K*_0..K*_127 = K1..K128`, `IV*` likewise (`key[0]`
    /// is `K1`).
    pub fn load(key: &[T; 128], iv: &[T; 128], zero: T, one: T) -> Self {
        let mut c = iv[84..].to_vec();
        c.resize(110, one);
        c.push(zero);
        State {
            a: Register::new(key[..93].to_vec()),
            b: Register::new(iv[..84].to_vec()),
            c: Register::new(c),
            key: Register::new(key.to_vec()),
            iv: Register::new(iv.to_vec()),
        }
    }

    /// Every bit: `s1..s288`, `K*_0..K*_127`, `IV*_0..IV*_127` (544): a
    /// state to keep, [`State::from_bits`] resumes it.
    pub fn bits(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(STATE + 256);
        for r in [&self.a, &self.b, &self.c, &self.key, &self.iv] {
            out.extend((0..r.bits.len()).map(|i| r.get(i)));
        }
        out
    }

    /// The state [`State::bits`] gave; `None` unless there are 544 bits.
    pub fn from_bits(bits: &[T]) -> Option<Self> {
        if bits.len() != STATE + 256 {
            return None;
        }
        let (a, rest) = bits.split_at(93);
        let (b, rest) = rest.split_at(84);
        let (c, rest) = rest.split_at(111);
        let (key, iv) = rest.split_at(128);
        Some(State {
            a: Register::new(a.to_vec()),
            b: Register::new(b.to_vec()),
            c: Register::new(c.to_vec()),
            key: Register::new(key.to_vec()),
            iv: Register::new(iv.to_vec()),
        })
    }

    /// `s_i` (1-based, as the specification numbers it).
    fn s(&self, i: usize) -> T {
        match i {
            1..=93 => self.a.get(i - 1),
            94..=177 => self.b.get(i - 94),
            _ => self.c.get(i - 178),
        }
    }

    /// What the next round reads.
    pub fn taps(&self) -> Taps<T> {
        let s = |i| self.s(i);
        Taps {
            t1: [s(66), s(93)],
            t2: [s(162), s(177)],
            t3: [s(243), s(288)],
            and1: [s(91), s(92)],
            and2: [s(175), s(176)],
            and3: [s(286), s(287)],
            add: [s(171), s(264), s(69)],
            k: self.key.get(0),
            v: self.iv.get(0),
        }
    }

    /// Ends a round: `[t3, t1, t2]` shift into `s1`, `s94` and `s178`;
    /// the key and IV registers rotate.
    pub fn shift(&mut self, [t3, t1, t2]: [T; 3]) {
        self.a.push_front(t3);
        self.b.push_front(t1);
        self.c.push_front(t2);
        self.key.rotate();
        self.iv.rotate();
    }
}

/// Kreyvium on clear bits: what the data owner runs.
#[derive(Clone, Debug)]
pub struct Kreyvium {
    state: State<bool>,
}

/// The Kreyvium authors' test vectors, from their reference code: key,
/// IV (hex, the bytes in order) and the first 64 bits of keystream (hex,
/// bytes). A check for any implementation, ours under FHE included.
pub const VECTORS: [(&str, &str, &str); 4] = [
    (
        "00000000000000000000000000000000",
        "00000000000000000000000000000000",
        "26DCF1F4BC0F1922",
    ),
    (
        "01000000000000000000000000000000",
        "00000000000000000000000000000000",
        "4FD421D4DA3D2C8A",
    ),
    (
        "00000000000000000000000000000000",
        "01000000000000000000000000000000",
        "C9217BA0D762ACA1",
    ),
    (
        "0053A6F94C9FF24598EB000000000000",
        "0D74DB42A91077DE45AC000000000000",
        "D1F0303482061111",
    ),
];

impl Kreyvium {
    /// The cipher keyed with `key` and `iv`, warmed up.
    pub fn new(key: &[u8; 16], iv: &[u8; 16]) -> Self {
        let mut state = State::load(&bits_of(key), &bits_of(iv), false, true);
        for _ in 0..WARM_UP {
            let (_, new) = round_clear(&state.taps());
            state.shift(new);
        }
        Kreyvium { state }
    }

    /// The next `n` keystream bits.
    pub fn keystream_bits(&mut self, n: usize) -> Vec<bool> {
        (0..n)
            .map(|_| {
                let (z, new) = round_clear(&self.state.taps());
                self.state.shift(new);
                z
            })
            .collect()
    }

    /// The next `n` keystream bytes ([`bytes_of`]).
    pub fn keystream(&mut self, n: usize) -> Vec<u8> {
        bytes_of(&self.keystream_bits(8 * n))
    }

    /// `data` XOR the next keystream bytes: encryption and decryption.
    pub fn apply(&mut self, data: &mut [u8]) {
        let ks = self.keystream(data.len());
        data.iter_mut().zip(ks).for_each(|(d, k)| *d ^= k);
    }
}

/// One round on clear bits: `(z, [t3, t1, t2])`, the keystream bit and
/// the three bits [`State::shift`] takes.
pub fn round_clear(t: &Taps<bool>) -> (bool, [bool; 3]) {
    let t1 = t.t1[0] ^ t.t1[1];
    let t2 = t.t2[0] ^ t.t2[1];
    let t3 = t.t3[0] ^ t.t3[1] ^ t.k;
    let z = t1 ^ t2 ^ t3;
    let t1 = t1 ^ (t.and1[0] & t.and1[1]) ^ t.add[0] ^ t.v;
    let t2 = t2 ^ (t.and2[0] & t.and2[1]) ^ t.add[1];
    let t3 = t3 ^ (t.and3[0] & t.and3[1]) ^ t.add[2];
    (z, [t3, t1, t2])
}

/// Keystream bits packed as the vectors pack them: bit `i` is bit `i % 8`
/// of byte `i / 8`.
pub fn bytes_of(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|c| c.iter().rev().fold(0u8, |acc, &b| acc << 1 | b as u8))
        .collect()
}

/// The 128 bits `K1..K128` of a key or IV written as the vectors write
/// them: the 16 bytes are one little-endian number whose most significant
/// bit is `K1`.
pub fn bits_of(bytes: &[u8; 16]) -> [bool; 128] {
    std::array::from_fn(|i| {
        let j = 127 - i;
        (bytes[j / 8] >> (j % 8)) & 1 == 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    /// The authors' vectors (their reference code's first 64 bits): every
    /// key and IV bit is read where the specification puts it.
    #[test]
    fn published_vectors() {
        for (k, v, z) in VECTORS {
            let (k, v) = (hex(k).try_into().unwrap(), hex(v).try_into().unwrap());
            assert_eq!(Kreyvium::new(&k, &v).keystream(8), hex(z), "key {k:02x?}");
        }
    }

    #[test]
    fn a_state_resumes_from_its_bits() {
        let mut c = Kreyvium::new(&[3; 16], &[5; 16]);
        c.keystream_bits(77);
        let mut resumed = Kreyvium {
            state: State::from_bits(&c.state.bits()).unwrap(),
        };
        assert_eq!(resumed.keystream_bits(300), c.keystream_bits(300));
        assert!(State::from_bits(&[false; 543]).is_none());
    }

    #[test]
    fn applying_twice_gives_the_data_back() {
        let (k, v) = ([7u8; 16], [9u8; 16]);
        let data: Vec<u8> = (0..100u8).collect();
        let mut c = data.clone();
        Kreyvium::new(&k, &v).apply(&mut c);
        assert_ne!(c, data);
        Kreyvium::new(&k, &v).apply(&mut c);
        assert_eq!(c, data);
    }
}
