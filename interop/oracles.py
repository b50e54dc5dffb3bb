"""Independent pure-Python references used by the interop tests.

Nothing here calls the Swift code. Where a third-party library already is the oracle (coincurve,
cryptography, hashlib, eth-keys), the tests use it directly; this module holds what those libraries
do not offer: curve constants, affine secp256k1 arithmetic, HChaCha20 (for XChaCha20-Poly1305) and
a re-implementation of the DomainHash framing from its specification.
"""

from __future__ import annotations

import hashlib
import secrets
import struct

# secp256k1: field prime, group order, generator.
P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8

# Ed25519 group order ℓ.
L = 2**252 + 27742317777372353535851937790883648493

# P-256 group order.
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


# ---------------------------------------------------------------- encodings


def error_name(result) -> str | None:
    """The error name of a CLI result or sub-result ({"error": name, "detail": ...}), else None."""
    if isinstance(result, dict) and "error" in result:
        return result["error"]
    return None


def be32(value: int) -> str:
    """32-byte big-endian hex."""
    return value.to_bytes(32, "big").hex()


def le32(value: int) -> str:
    """32-byte little-endian hex."""
    return value.to_bytes(32, "little").hex()


def from_be(text: str) -> int:
    return int.from_bytes(bytes.fromhex(text), "big")


def from_le(text: str) -> int:
    return int.from_bytes(bytes.fromhex(text), "little")


def random_below(bound: int) -> int:
    """Uniform in [0, bound)."""
    return secrets.randbelow(bound)


def random_nonzero_below(bound: int) -> int:
    """Uniform in [1, bound)."""
    return 1 + secrets.randbelow(bound - 1)


# ---------------------------------------------------------------- secp256k1 (affine, variable time)

Affine = "tuple[int, int] | None"  # None is the point at infinity


def ec_add(p1, p2):
    """Affine point addition on y² = x³ + 7 over F_p."""
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2:
        if (y1 + y2) % P == 0:
            return None
        slope = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (slope * slope - x1 - x2) % P
    return x3, (slope * (x1 - x3) - y1) % P


def ec_mul(k: int, point=(GX, GY)):
    """k·point by double-and-add."""
    result = None
    addend = point
    k %= N
    while k:
        if k & 1:
            result = ec_add(result, addend)
        addend = ec_add(addend, addend)
        k >>= 1
    return result


def sec1_compressed(point) -> str | None:
    """Compressed SEC1 hex, or None for infinity."""
    if point is None:
        return None
    x, y = point
    return (bytes([2 | (y & 1)]) + x.to_bytes(32, "big")).hex()


def sec1_uncompressed(point) -> str | None:
    if point is None:
        return None
    x, y = point
    return (b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")).hex()


def lift_x(x: int) -> tuple[int, int] | None:
    """The point with this x and even y, or None when x³ + 7 is not a square (or x ≥ p)."""
    if x >= P:
        return None
    rhs = (pow(x, 3, P) + 7) % P
    y = pow(rhs, (P + 1) // 4, P)
    if y * y % P != rhs:
        return None
    return x, (y if y % 2 == 0 else P - y)


def der_integer(value: int) -> bytes:
    body = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
    if body[0] & 0x80:
        body = b"\x00" + body
    return b"\x02" + bytes([len(body)]) + body


def der_signature(r: int, s: int) -> bytes:
    """Strict DER SEQUENCE { INTEGER r, INTEGER s } (short-form lengths suffice for 256-bit values)."""
    body = der_integer(r) + der_integer(s)
    return b"\x30" + bytes([len(body)]) + body


# ---------------------------------------------------------------- Ed25519


def ed25519_secret_scalar(seed: bytes) -> int:
    """RFC 8032 §5.1.5: the clamped first half of SHA-512(seed), reduced mod ℓ (so its multiple of B
    is the public key)."""
    head = bytearray(hashlib.sha512(seed).digest()[:32])
    head[0] &= 248
    head[31] &= 127
    head[31] |= 64
    return int.from_bytes(head, "little") % L


# ---------------------------------------------------------------- HChaCha20 / XChaCha20-Poly1305


def _quarter_round(state: list[int], a: int, b: int, c: int, d: int) -> None:
    def rotl(value: int, count: int) -> int:
        return ((value << count) | (value >> (32 - count))) & 0xFFFFFFFF

    state[a] = (state[a] + state[b]) & 0xFFFFFFFF
    state[d] = rotl(state[d] ^ state[a], 16)
    state[c] = (state[c] + state[d]) & 0xFFFFFFFF
    state[b] = rotl(state[b] ^ state[c], 12)
    state[a] = (state[a] + state[b]) & 0xFFFFFFFF
    state[d] = rotl(state[d] ^ state[a], 8)
    state[c] = (state[c] + state[d]) & 0xFFFFFFFF
    state[b] = rotl(state[b] ^ state[c], 7)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """HChaCha20 (draft-irtf-cfrg-xchacha §2.2): 20 ChaCha rounds without the final addition,
    output words 0..3 and 12..15."""
    assert len(key) == 32 and len(nonce16) == 16
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    for _ in range(10):
        _quarter_round(state, 0, 4, 8, 12)
        _quarter_round(state, 1, 5, 9, 13)
        _quarter_round(state, 2, 6, 10, 14)
        _quarter_round(state, 3, 7, 11, 15)
        _quarter_round(state, 0, 5, 10, 15)
        _quarter_round(state, 1, 6, 11, 12)
        _quarter_round(state, 2, 7, 8, 13)
        _quarter_round(state, 3, 4, 9, 14)
    return struct.pack("<8I", *(state[0:4] + state[12:16]))


def xchacha20poly1305_seal(key: bytes, nonce24: bytes, plaintext: bytes, aad: bytes) -> bytes:
    """XChaCha20-Poly1305 = ChaCha20-Poly1305 under HChaCha20(key, nonce[:16]) and nonce 0⁴ ‖ nonce[16:]."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    subkey = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(subkey).encrypt(b"\x00" * 4 + nonce24[16:], plaintext, aad)


# ---------------------------------------------------------------- DomainHash (DKLs23 spec §5)


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def domain_frame(protocol: str, tag: str, fields: list[bytes]) -> bytes:
    """frame(tag; f1..fk) = lp(protocol) ‖ lp(tag) ‖ u32(k) ‖ lp(f1) ‖ … ‖ lp(fk)."""
    out = _lp(protocol.encode()) + _lp(tag.encode()) + struct.pack(">I", len(fields))
    return out + b"".join(_lp(field) for field in fields)


def domain_prg(protocol: str, seed: bytes, label: bytes, count: int) -> bytes:
    """First `count` bytes of H("prg"; seed, label, u32(0)) ‖ H("prg"; seed, label, u32(1)) ‖ …"""
    out = b""
    counter = 0
    while len(out) < count:
        frame = domain_frame(protocol, "prg", [seed, label, struct.pack(">I", counter)])
        out += hashlib.sha256(frame).digest()
        counter += 1
    return out[:count]


# ---------------------------------------------------------------- edwards25519 (affine, variable time)

ED_P = 2**255 - 19
ED_D = -121665 * pow(121666, -1, ED_P) % ED_P
ED_SQRT_M1 = pow(2, (ED_P - 1) // 4, ED_P)


def ed_add(p1: tuple[int, int], p2: tuple[int, int]) -> tuple[int, int]:
    """Affine addition on −x² + y² = 1 + d·x²·y² (complete: no special cases)."""
    (x1, y1), (x2, y2) = p1, p2
    t = ED_D * x1 * x2 * y1 * y2 % ED_P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, -1, ED_P) % ED_P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, -1, ED_P) % ED_P
    return x3, y3


def ed_mul(k: int, point: tuple[int, int]) -> tuple[int, int]:
    result, addend = (0, 1), point
    while k:
        if k & 1:
            result = ed_add(result, addend)
        addend = ed_add(addend, addend)
        k >>= 1
    return result


def ed_decode(encoding: bytes) -> tuple[int, int] | None:
    """RFC 8032 §5.1.3 decoding; None when y ≥ p, x² has no root, or x = 0 with the sign bit set."""
    value = int.from_bytes(encoding, "little")
    y, sign = value & (2**255 - 1), value >> 255
    if y >= ED_P:
        return None
    x2 = (y * y - 1) * pow(ED_D * y * y + 1, -1, ED_P) % ED_P
    x = pow(x2, (ED_P + 3) // 8, ED_P)
    if x * x % ED_P != x2:
        x = x * ED_SQRT_M1 % ED_P
    if x * x % ED_P != x2 or (x == 0 and sign):
        return None
    if x & 1 != sign:
        x = ED_P - x
    return x, y


def ed_encode(point: tuple[int, int]) -> str:
    x, y = point
    return (y | (x & 1) << 255).to_bytes(32, "little").hex()


ED_BASE = ed_decode(bytes.fromhex("58" + "66" * 31))
