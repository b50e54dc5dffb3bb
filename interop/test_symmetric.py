"""Symmetric primitives: Swift ChaCha20-Poly1305 / XChaCha20-Poly1305, SHA-2, HMAC, AESPRG and
DomainHash against `cryptography`, hashlib/hmac and oracles.py."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from oracles import N, domain_frame, domain_prg, error_name, from_be, hchacha20, xchacha20poly1305_seal

LENGTHS = [0, 1, 15, 16, 17, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 4099]
AEAD_LENGTHS = [0, 1, 15, 16, 17, 63, 64, 65, 1000]
AAD_LENGTHS = [0, 12, 100]


# ---------------------------------------------------------------- AEAD


def aead_inputs(nonce_length: int) -> list[tuple[bytes, bytes, bytes, bytes]]:
    """(key, nonce, aad, plaintext) over every plaintext and aad length."""
    return [
        (os.urandom(32), os.urandom(nonce_length), os.urandom(a), os.urandom(p))
        for p in AEAD_LENGTHS
        for a in AAD_LENGTHS
    ]


def aead_case(mode: str, key: bytes, nonce: bytes, aad: bytes, data: bytes) -> dict:
    return {"mode": mode, "key": key.hex(), "nonce": nonce.hex(), "aad": aad.hex(), "data": data.hex()}


def check_aead(interop, op: str, nonce_length: int, reference_seal) -> None:
    inputs = aead_inputs(nonce_length)
    sealed = interop.call(op, [aead_case("seal", *i) for i in inputs])
    for (key, nonce, aad, plaintext), result in zip(inputs, sealed):
        assert result["output"] == reference_seal(key, nonce, plaintext, aad).hex(), (len(plaintext), len(aad))
    # Open what the reference sealed.
    opened = interop.call(op, [aead_case("open", k, n, a, reference_seal(k, n, p, a)) for k, n, a, p in inputs])
    for (_, _, _, plaintext), result in zip(inputs, opened):
        assert result["output"] == plaintext.hex()


def check_aead_rejections(interop, op: str, nonce_length: int, reference_seal) -> None:
    key, nonce, aad, plaintext = os.urandom(32), os.urandom(nonce_length), b"header", b"attack at dawn"
    sealed = reference_seal(key, nonce, plaintext, aad)
    flip = lambda data, i: data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :]  # noqa: E731
    tampered = [
        aead_case("open", key, nonce, aad, flip(sealed, 0)),  # ciphertext
        aead_case("open", key, nonce, aad, flip(sealed, len(sealed) - 1)),  # tag
        aead_case("open", key, nonce, b"headeR", sealed),
        aead_case("open", key, flip(nonce, 0), aad, sealed),
        aead_case("open", flip(key, 31), nonce, aad, sealed),
        aead_case("open", key, nonce, aad, sealed[:-1]),
        aead_case("open", key, nonce, aad, sealed[:15]),  # shorter than a tag
        aead_case("open", key, nonce, aad, b""),
    ]
    wrong_lengths = [
        aead_case("seal", key[:31], nonce, aad, plaintext),
        aead_case("seal", key, nonce + b"\x00", aad, plaintext),
        aead_case("open", key + b"\x00", nonce, aad, sealed),
        aead_case("open", key, nonce[:-1], aad, sealed),
    ]
    names = [error_name(r) for r in interop.call(op, tampered + wrong_lengths)]
    assert names == ["authenticationFailed"] * len(tampered) + ["invalidLength"] * len(wrong_lengths)


def chacha_seal(key: bytes, nonce: bytes, plaintext: bytes, aad: bytes) -> bytes:
    return ChaCha20Poly1305(key).encrypt(nonce, plaintext, aad)


def test_chacha20poly1305_matches_cryptography(interop):
    check_aead(interop, "chacha20poly1305", 12, chacha_seal)


def test_chacha20poly1305_rejects_tampering(interop):
    check_aead_rejections(interop, "chacha20poly1305", 12, chacha_seal)


def test_hchacha20_reference_matches_its_test_vector():
    # draft-irtf-cfrg-xchacha-03 §2.2.1: checks the oracle itself.
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a0000000031415927")
    assert hchacha20(key, nonce).hex() == "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"


def test_xchacha20poly1305_matches_reference(interop):
    check_aead(interop, "xchacha20poly1305", 24, xchacha20poly1305_seal)


def test_xchacha20poly1305_rejects_tampering(interop):
    check_aead_rejections(interop, "xchacha20poly1305", 24, xchacha20poly1305_seal)


# ---------------------------------------------------------------- SHA-2 and HMAC


def test_sha256_and_sha512_match_hashlib(interop):
    inputs = [os.urandom(n) for n in LENGTHS]
    for op, reference in (("sha256", hashlib.sha256), ("sha512", hashlib.sha512)):
        for data, result in zip(inputs, interop.call(op, [d.hex() for d in inputs])):
            assert result["digest"] == result["incremental"] == reference(data).hexdigest(), (op, len(data))


def test_hmac_matches_python(interop):
    key_lengths = [0, 1, 32, 63, 64, 65, 127, 128, 129, 200]
    inputs = [(os.urandom(k), os.urandom(LENGTHS[i % len(LENGTHS)])) for i, k in enumerate(key_lengths * 2)]
    cases = [{"key": k.hex(), "data": d.hex()} for k, d in inputs]
    for op, digest in (("hmac-sha256", hashlib.sha256), ("hmac-sha512", hashlib.sha512)):
        for (key, data), result in zip(inputs, interop.call(op, cases)):
            assert result["mac"] == hmac.new(key, data, digest).hexdigest(), (op, len(key), len(data))


def test_hmac_rfc4231_case_2(interop):
    case = {"key": b"Jefe".hex(), "data": b"what do ya want for nothing?".hex()}
    [result] = interop.call("hmac-sha256", [case])
    assert result["mac"] == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"


# ---------------------------------------------------------------- AES-256-CTR PRG


def aes_ctr_stream(seed: bytes, counter_block: bytes, count: int) -> bytes:
    encryptor = Cipher(algorithms.AES(seed), modes.CTR(counter_block)).encryptor()
    return encryptor.update(b"\x00" * count) + encryptor.finalize()


def test_aes_prg_matches_aes_256_ctr(interop):
    counters = [
        b"\x00" * 16,
        os.urandom(16),
        b"\xff" * 16,  # wraps to zero
        b"\x00" * 8 + b"\xff" * 8,  # carries into the high half
        b"\xff" * 15 + b"\xfe",
    ]
    counts = [0, 1, 15, 16, 17, 100, 4096]
    inputs = [(os.urandom(32), c, n, secrets.randbelow(n + 1)) for c in counters for n in counts]
    cases = [{"seed": s.hex(), "counterBlock": c.hex(), "count": n, "split": k} for s, c, n, k in inputs]
    for (seed, counter, count, _), result in zip(inputs, interop.call("aes-prg", cases)):
        expected = aes_ctr_stream(seed, counter, count).hex()
        assert result["stream"] == result["pieces"] == expected, (counter.hex(), count)


def test_aes_prg_default_counter_is_zero_and_bad_lengths_fail(interop):
    seed = os.urandom(32)
    cases = [
        {"seed": seed.hex(), "count": 48},
        {"seed": seed.hex()[:-2], "count": 16},
        {"seed": seed.hex(), "counterBlock": "00" * 15, "count": 16},
        {"seed": seed.hex(), "count": -1},
        {"seed": seed.hex(), "count": 2**21},
    ]
    results = interop.call("aes-prg", cases)
    assert results[0]["stream"] == aes_ctr_stream(seed, b"\x00" * 16, 48).hex()
    assert [error_name(r) for r in results[1:]] == ["invalidLength", "invalidLength", "outOfRange", "outOfRange"]


# ---------------------------------------------------------------- DomainHash


def test_domain_hash_matches_the_specification(interop):
    inputs = []
    for i in range(20):
        fields = [os.urandom(secrets.randbelow(70)) for _ in range(i % 5)]
        inputs.append((f"SilentShard-Test-v{i}", ["", "a", "keygen/round1", "ü-tag"][i % 4], fields))
    cases = [{"protocol": p, "tag": t, "fields": [f.hex() for f in fs]} for p, t, fs in inputs]
    for (protocol, tag, fields), result in zip(inputs, interop.call("domain-hash", cases)):
        frame = domain_frame(protocol, tag, fields)
        assert result["frame"] == frame.hex()
        assert result["hash"] == hashlib.sha256(frame).hexdigest()
        assert result["hash512"] == hashlib.sha512(frame).hexdigest()
        assert from_be(result["scalar"]) == int.from_bytes(hashlib.sha512(frame).digest(), "big") % N


def test_domain_prg_matches_the_specification(interop):
    inputs = [(os.urandom(32), os.urandom(n % 9), n) for n in (0, 1, 31, 32, 33, 100, 1000)]
    cases = [{"protocol": "SilentShard-DKLs23-v1", "tag": "x", "fields": [s.hex(), l.hex()], "prgCount": n}
             for s, l, n in inputs]
    for (seed, label, count), result in zip(inputs, interop.call("domain-hash", cases)):
        assert result["prg"] == domain_prg("SilentShard-DKLs23-v1", seed, label, count).hex()
