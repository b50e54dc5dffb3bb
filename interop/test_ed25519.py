"""Curve25519: Swift `Ed25519` signing keys, scalars and points, and `X25519`, against
`cryptography` (OpenSSL), Python integers mod ℓ and a pure-Python edwards25519 reference."""

from __future__ import annotations

import os
import secrets

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from oracles import (
    ED_BASE,
    ED_P,
    L,
    ed25519_secret_scalar,
    ed_add,
    ed_decode,
    ed_encode,
    ed_mul,
    error_name,
    from_le,
    le32,
)

IDENTITY = "01" + "00" * 31
# Encodings of the small-order points (libsodium's blocklist, canonical ones).
SMALL_ORDER = [
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
    "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
    "0000000000000000000000000000000000000000000000000000000000000080",  # order 4
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",  # order 8
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",  # order 8
]
EDGE_SCALARS = [0, 1, 2, L - 1, L - 2, 2**252, (L - 1) // 2]
RANDOM_PAIRS = 40
MESSAGE_LENGTHS = [0, 1, 31, 32, 33, 64, 127, 128, 1000]


def raw_public(key) -> str:
    return key.public_key().public_bytes_raw().hex()


# ---------------------------------------------------------------- signatures


def signing_cases() -> list[tuple[bytes, bytes]]:
    seeds = [b"\x00" * 32, b"\xff" * 32] + [os.urandom(32) for _ in range(38)]
    return [(seed, os.urandom(MESSAGE_LENGTHS[i % len(MESSAGE_LENGTHS)])) for i, seed in enumerate(seeds)]


@pytest.fixture(scope="module")
def signatures(interop):
    cases = signing_cases()
    results = interop.call("ed25519-sign", [{"seed": s.hex(), "message": m.hex()} for s, m in cases])
    return list(zip(cases, results))


def test_rfc8032_test_vector_1(interop):
    seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
    [result] = interop.call("ed25519-sign", [{"seed": seed, "message": ""}])
    assert result["publicKey"] == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    assert result["signature"] == (
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )


def test_same_keys_and_signatures_as_cryptography(signatures):
    for (seed, message), result in signatures:
        theirs = Ed25519PrivateKey.from_private_bytes(seed)
        assert result["publicKey"] == raw_public(theirs)
        assert result["signature"] == theirs.sign(message).hex()  # Ed25519 is deterministic


def test_our_signatures_verify_with_cryptography(signatures):
    for (_, message), result in signatures:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(result["publicKey"]))
        key.verify(bytes.fromhex(result["signature"]), message)  # raises if invalid


def test_cryptography_signatures_verify_with_ours(interop):
    cases = []
    for length in MESSAGE_LENGTHS * 3:
        key, message = Ed25519PrivateKey.generate(), os.urandom(length)
        cases.append({"publicKey": raw_public(key), "message": message.hex(), "signature": key.sign(message).hex()})
    assert all(r["valid"] is True for r in interop.call("ed25519-verify", cases))


def tampered(signature: bytes, message: bytes, public: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(public key, message, signature) variants that must not verify."""
    s = int.from_bytes(signature[32:], "little")
    other = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    return [
        (public, message, bytes([signature[0] ^ 1]) + signature[1:]),  # R
        (public, message, signature[:40] + bytes([signature[40] ^ 0x10]) + signature[41:]),  # S
        (public, message, signature[:32] + (s + L).to_bytes(32, "little")),  # non-canonical S
        (public, message + b"\x00", signature),
        (public, bytes([message[0] ^ 0x80]) + message[1:] if message else b"x", signature),
        (other, message, signature),
        (public, message, signature[:63]),
        (public, message, b"\x00" * 64),
    ]


def test_tampered_signatures_rejected_by_both(interop, signatures):
    variants = []
    for (_, message), result in signatures[:10]:
        variants += tampered(bytes.fromhex(result["signature"]), message, bytes.fromhex(result["publicKey"]))
    cases = [{"publicKey": k.hex(), "message": m.hex(), "signature": s.hex()} for k, m, s in variants]
    for (key, message, signature), result in zip(variants, interop.call("ed25519-verify", cases)):
        assert result["valid"] is False, (key.hex(), message.hex(), signature.hex())
        with pytest.raises(InvalidSignature):
            Ed25519PublicKey.from_public_bytes(key).verify(signature, message)


def test_small_order_and_malformed_keys_rejected(interop):
    keys = SMALL_ORDER + [IDENTITY, "ed" + "ff" * 30 + "7f", "00" * 31, "00" * 33]
    cases = [{"publicKey": k, "message": "", "signature": "00" * 64} for k in keys]
    names = [error_name(r) for r in interop.call("ed25519-verify", cases)]
    assert names == ["invalidKey"] * (len(keys) - 2) + ["invalidLength"] * 2


# ---------------------------------------------------------------- scalars and points


def scalar_pairs() -> list[tuple[int, int]]:
    pairs = [(a, b) for a in EDGE_SCALARS for b in EDGE_SCALARS]
    return pairs + [(secrets.randbelow(L), secrets.randbelow(L)) for _ in range(RANDOM_PAIRS)]


@pytest.fixture(scope="module")
def arithmetic(interop):
    pairs = scalar_pairs()
    results = interop.call("ed25519-scalar", [{"a": le32(a), "b": le32(b)} for a, b in pairs])
    return list(zip(pairs, results))


def test_scalar_ring_operations_match_python_integers(arithmetic):
    for (a, b), result in arithmetic:
        assert "error" not in result, (a, b, result)
        assert from_le(result["sum"]) == (a + b) % L
        assert from_le(result["difference"]) == (a - b) % L
        assert from_le(result["product"]) == (a * b) % L
        assert from_le(result["negation"]) == (-a) % L
        assert result["equal"] == (a == b)
        if a == 0:
            assert error_name(result["inverse"]) == "zeroScalar"
        else:
            assert from_le(result["inverse"]) == pow(a, -1, L)


def test_point_operations_are_consistent(arithmetic):
    for (a, b), result in arithmetic:
        assert result["bTimesAB"] == result["productB"], (a, b)
        assert result["aBPlusBB"] == result["sumB"], (a, b)
        assert result["aBMinusBB"] == result["differenceB"], (a, b)
        if a == 0:
            assert result["aB"] == IDENTITY


def test_base_multiples_match_pure_python_reference(arithmetic):
    for (a, b), result in arithmetic[::5]:
        assert result["aB"] == ed_encode(ed_mul(a, ED_BASE)), a
        assert result["negatedAB"] == ed_encode(ed_mul((L - a) % L, ED_BASE)), a
        assert result["aBPlusBB"] == ed_encode(ed_mul((a + b) % L, ED_BASE)), (a, b)


def test_base_multiple_of_clamped_seed_scalar_is_cryptography_public_key(interop):
    # RFC 8032: public key = s·B with s the clamped SHA-512(seed) prefix, and s·B = (s mod ℓ)·B.
    seeds = [os.urandom(32) for _ in range(20)]
    cases = [{"a": le32(ed25519_secret_scalar(seed)), "b": le32(1)} for seed in seeds]
    for seed, result in zip(seeds, interop.call("ed25519-scalar", cases)):
        assert result["aB"] == raw_public(Ed25519PrivateKey.from_private_bytes(seed))


def test_wide_reduction_matches_python_integers(interop):
    values = [0, 1, L - 1, L, L + 1, 2**256 - 1, 2**512 - 1, L << 256, (L - 1) * L]
    values += [int.from_bytes(os.urandom(64), "little") for _ in range(30)]
    cases = [{"a": le32(1), "b": le32(1), "wide": v.to_bytes(64, "little").hex()} for v in values]
    for value, result in zip(values, interop.call("ed25519-scalar", cases)):
        assert from_le(result["wide"]) == value % L, hex(value)


def test_out_of_range_scalars_are_rejected(interop):
    bad = [L, L + 1, 2**253, 2**256 - 1]
    cases = [{"a": le32(v), "b": le32(1)} for v in bad] + [{"a": "00" * 31, "b": le32(1)}]
    names = [error_name(r) for r in interop.call("ed25519-scalar", cases)]
    assert names == ["scalarOutOfRange"] * 4 + ["invalidLength"]


def torsion_point() -> tuple[int, int]:
    point = ed_decode(bytes.fromhex(SMALL_ORDER[3]))
    assert point is not None and ed_mul(8, point) == (0, 1)
    return point


def test_point_decoding(interop):
    valid = [ed_encode(ed_mul(secrets.randbelow(L - 1) + 1, ED_BASE)) for _ in range(15)]
    valid += [raw_public(Ed25519PrivateKey.generate()) for _ in range(5)]
    torsioned = [ed_encode(ed_add(ed_decode(bytes.fromhex(v)), torsion_point())) for v in valid[:8]]
    off_curve = []
    while len(off_curve) < 5:
        candidate = secrets.token_bytes(32)
        if ed_decode(candidate) is None and int.from_bytes(candidate, "little") & (2**255 - 1) < ED_P:
            off_curve.append(candidate.hex())
    non_canonical = [
        (ED_P).to_bytes(32, "little").hex(),  # y = p ≡ 0
        (ED_P + 1).to_bytes(32, "little").hex(),  # y = p + 1 ≡ 1 (the identity, aliased)
        (2**255 - 1).to_bytes(32, "little").hex(),
        (1 | 1 << 255).to_bytes(32, "little").hex(),  # the identity with x's sign bit set (x = 0)
    ]
    encodings = valid + [IDENTITY] + SMALL_ORDER + torsioned + off_curve + non_canonical + ["00" * 31, "00" * 33]
    results = interop.call("ed25519-decode", encodings)
    it = iter(zip(encodings, results))
    for encoding, result in [next(it) for _ in valid]:
        assert result["point"] == result["withIdentity"] == encoding
    encoding, result = next(it)
    assert error_name(result["point"]) == "identityPoint" and result["withIdentity"] == IDENTITY
    for encoding, result in it:
        assert error_name(result["point"]) == error_name(result["withIdentity"]), encoding
        assert error_name(result["point"]) in {"pointNotInPrimeOrderSubgroup", "invalidLength"}, encoding


# ---------------------------------------------------------------- X25519


RFC7748_ALICE = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
RFC7748_BOB = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
RFC7748_SHARED = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"


def test_x25519_rfc7748_vector(interop):
    bob_public = X25519PrivateKey.from_private_bytes(bytes.fromhex(RFC7748_BOB)).public_key().public_bytes_raw()
    [result] = interop.call("x25519", [{"privateKey": RFC7748_ALICE, "peerPublicKey": bob_public.hex()}])
    assert result["publicKey"] == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    assert result["shared"] == RFC7748_SHARED


def test_x25519_matches_cryptography(interop):
    pairs = [(os.urandom(32), X25519PrivateKey.generate()) for _ in range(40)]
    cases = [{"privateKey": ours.hex(), "peerPublicKey": raw_public(theirs)} for ours, theirs in pairs]
    for (ours, theirs), result in zip(pairs, interop.call("x25519", cases)):
        reference = X25519PrivateKey.from_private_bytes(ours)
        assert result["publicKey"] == raw_public(reference)
        assert result["shared"] == reference.exchange(theirs.public_key()).hex()
        assert result["shared"] == theirs.exchange(X25519PublicKey.from_public_bytes(bytes.fromhex(result["publicKey"]))).hex()


def test_x25519_small_order_peers_are_rejected(interop):
    # Curve25519 points of order 1, 2, 4, 8 (and p-aliases): the shared secret is all zeros.
    weak = [
        "00" * 32,
        "01" + "00" * 31,
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ]
    private = os.urandom(32)
    results = interop.call("x25519", [{"privateKey": private.hex(), "peerPublicKey": w} for w in weak])
    for peer, result in zip(weak, results):
        assert error_name(result["shared"]) == "weakSharedSecret", peer
        with pytest.raises(ValueError):
            X25519PrivateKey.from_private_bytes(private).exchange(X25519PublicKey.from_public_bytes(bytes.fromhex(peer)))


def test_x25519_rejects_wrong_lengths(interop):
    cases = [{"privateKey": "00" * 31, "peerPublicKey": "09" + "00" * 31},
             {"privateKey": "11" * 32, "peerPublicKey": "09" + "00" * 30}]
    assert [error_name(r) for r in interop.call("x25519", cases)] == ["invalidLength", "invalidLength"]
