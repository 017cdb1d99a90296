"""Transciphering from Python: the data owner's plain ciphers against
their published vectors, and sealed bytes sent in the clear beside
encrypted inputs (``encrypt(..., clear=...)``), run encrypted and checked
against Python's integers."""

import numpy as np
import pytest

import hearth


def test_aes_ctr_is_sp_800_38a():
    # NIST SP 800-38A, F.5.1 (CTR-AES128.Encrypt), its four blocks.
    key = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
    counter = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
    plain = bytes.fromhex(
        "6bc1bee22e409f96e93d7e117393172a"
        "ae2d8a571e03ac9c9eb76fac45af8e51"
        "30c81c46a35ce411e5fbc1191a0a52ef"
        "f69f2445df4f9b17ad2b417be66c3710"
    )
    sealed = bytes.fromhex(
        "874d6191b620e3261bef6864990db6ce"
        "9806f66b7970fdff8617187bb9fffdff"
        "5ae4df3edbd5d35e5b4f09020db03eab"
        "1e031dda2fbe03d1792170a0f3009cee"
    )
    assert hearth.aes_ctr(key, counter, plain) == sealed
    assert hearth.aes_ctr(key, counter, sealed) == plain
    # A message's short last block; the counter wraps at 2^128.
    assert hearth.aes_ctr(key, counter, plain[:37]) == sealed[:37]
    wrapped = hearth.aes_ctr(key, b"\xff" * 16, bytes(32))
    assert wrapped[16:] == hearth.aes_ctr(key, bytes(16), bytes(16))
    with pytest.raises(hearth.ShapeError, match="key must be 16 bytes, not 15"):
        hearth.aes_ctr(key[:15], counter, plain)
    with pytest.raises(hearth.ShapeError, match="counter must be 16 bytes"):
        hearth.aes_ctr(key, counter + b"\0", plain)


@pytest.mark.parametrize(
    "key, iv, keystream",
    [
        ("00" * 16, "00" * 16, "26DCF1F4BC0F1922"),
        ("01" + "00" * 15, "00" * 16, "4FD421D4DA3D2C8A"),
        ("00" * 16, "01" + "00" * 15, "C9217BA0D762ACA1"),
        ("0053A6F94C9FF24598EB" + "00" * 6, "0D74DB42A91077DE45AC" + "00" * 6, "D1F0303482061111"),
    ],
)
def test_kreyvium_is_the_authors(key, iv, keystream):
    # The authors' reference code's first 64 bits of keystream.
    key, iv = bytes.fromhex(key), bytes.fromhex(iv)
    assert hearth.kreyvium(key, iv, bytes(8)) == bytes.fromhex(keystream)
    data = b"sixteen readings"
    assert hearth.kreyvium(key, iv, hearth.kreyvium(key, iv, data)) == data


def test_sealed_values_travel_in_the_clear(digits_keys):
    key, server = digits_keys
    p = hearth.Program("DIGITS_128")
    pad = p.input("pad", "u16")
    sealed = p.input("sealed", "u16", shape=4)
    total = p.constant(0, "u16")
    for s in sealed:
        total = total + (s ^ pad)
    p.output("total", total)
    prog = p.compile()
    data, pad_value = [40_000, 31, 65_535, 1_234], 0xB3A1
    owner_sealed = np.array([d ^ pad_value for d in data], dtype=np.uint16)
    public = key.public_key()
    clear = public.encrypt(prog, pad_value, owner_sealed, clear="sealed")
    encrypted = public.encrypt(prog, pad_value, owner_sealed)
    # 64 ciphertext bodies fewer, 8 bytes of values more.
    assert len(clear.to_bytes()) + 400 < len(encrypted.to_bytes())
    assert clear.entries == encrypted.entries
    out = key.decrypt(prog.run(server, clear, progress=False))
    assert out == sum(data) % 2**16
    with pytest.raises(hearth.ShapeError, match='no input named "nothing"'):
        key.encrypt(prog, pad_value, owner_sealed, clear=["nothing"])
    with pytest.raises(TypeError, match="clear= takes"):
        key.encrypt(prog, pad_value, owner_sealed, clear=3)


def test_programs_transcipher_in_the_clear_model():
    """A program turns sealed blocks into the data: AES-128-CTR (the key
    schedule, then a block) and Kreyvium, against the plain ciphers, on
    the clear backend (the circuits are those the encrypted runs use)."""
    p = hearth.Program("DIGITS_KS32_128")
    key = p.input("key", "u128")
    counter = p.input("counter", "u128")
    sealed_aes = p.input("sealed_aes", "u128")
    iv = p.input("iv", "u128")
    sealed_k = p.input("sealed_k", "u64")
    p.output("aes", key.aes_key_schedule().aes_ctr(counter, sealed_aes))
    p.output("kreyvium", key.kreyvium(iv, sealed_k))
    prog = p.compile()
    rng = np.random.default_rng(85)
    for _ in range(3):
        k, c, v = (bytes(rng.integers(0, 256, 16, dtype=np.uint8)) for _ in range(3))
        data = bytes(rng.integers(0, 256, 16, dtype=np.uint8))
        s_aes = hearth.aes_ctr(k, c, data)
        s_k = hearth.kreyvium(k, v, data[:8])
        little = lambda b: int.from_bytes(b, "little")
        out = prog.run_clear(little(k), int.from_bytes(c, "big"), little(s_aes), little(v), little(s_k))
        assert out == (little(data), little(data[:8]))


def test_transciphering_rows_refuse_what_they_cannot_take():
    def program():
        p = hearth.Program("DIGITS_KS32_128")
        return p, p.input("key", "u128"), p.input("narrow", "u64")

    p, key, narrow = program()
    with pytest.raises(hearth.HearthError, match="AES-128 key: expected an unsigned 128-bit word"):
        narrow.aes_key_schedule()
    p, key, narrow = program()
    with pytest.raises(TypeError, match="a word of any width"):
        key.aes_key_schedule().aes_ctr(7, narrow)
    # One keystream twice: the same round keys and clear counter.
    p, key, narrow = program()
    rk = key.aes_key_schedule()
    counter = p.constant(1, "u128")
    rk.aes_ctr(counter, narrow)
    with pytest.raises(hearth.HearthError, match="keystream"):
        rk.aes_ctr(counter, narrow)
