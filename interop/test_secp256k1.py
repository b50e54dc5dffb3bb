"""secp256k1: Swift `Secp256k1.Scalar`/`Point`/`ECDSA` against Python integers mod n, coincurve
(libsecp256k1), a pure-Python affine reference (oracles.ec_mul) and eth-keys' pure-Python ECDSA."""

from __future__ import annotations

import os
import secrets

import coincurve
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed, decode_dss_signature
from eth_keys import KeyAPI
from eth_keys.backends import NativeECCBackend

from oracles import (
    GX,
    GY,
    N,
    P,
    be32,
    der_signature,
    ec_add,
    ec_mul,
    error_name,
    from_be,
    lift_x,
    random_nonzero_below,
    sec1_compressed,
    sec1_uncompressed,
)

EDGE_SCALARS = [0, 1, 2, N - 1, N - 2, 2**255, (N - 1) // 2, (N + 1) // 2, 2**128, 2**256 - N]
RANDOM_PAIRS = 60
IDENTITY = "identityPoint"


# ---------------------------------------------------------------- coincurve helpers (None = identity)


def cc_point(k: int) -> coincurve.PublicKey | None:
    k %= N
    return None if k == 0 else coincurve.PublicKey.from_secret(k.to_bytes(32, "big"))


def cc_add(p1: coincurve.PublicKey | None, p2: coincurve.PublicKey | None, sum_is_zero: bool):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    if sum_is_zero:
        return None
    return coincurve.PublicKey.combine_keys([p1, p2])


def cc_multiply(point: coincurve.PublicKey | None, k: int):
    if point is None or k % N == 0:
        return None
    return point.multiply(k.to_bytes(32, "big"))


def hex_of(point: coincurve.PublicKey | None, compressed: bool = True):
    return IDENTITY if point is None else point.format(compressed=compressed).hex()


def ours(result) -> str:
    """A point sub-result as comparable text: the hex, or the error name."""
    return error_name(result) or result


# ---------------------------------------------------------------- scalar and point arithmetic


def arithmetic_cases() -> list[tuple[int, int]]:
    pairs = [(a, b) for a in EDGE_SCALARS for b in EDGE_SCALARS]
    pairs += [(secrets.randbelow(N), secrets.randbelow(N)) for _ in range(RANDOM_PAIRS)]
    pairs += [(a, (N - a) % N) for a in (1, 7, secrets.randbelow(N))]  # a + b ≡ 0
    return pairs


@pytest.fixture(scope="module")
def arithmetic(interop):
    pairs = arithmetic_cases()
    results = interop.call("secp256k1", [{"a": be32(a), "b": be32(b)} for a, b in pairs])
    return list(zip(pairs, results))


def test_scalar_ring_operations_match_python_integers(arithmetic):
    for (a, b), result in arithmetic:
        assert "error" not in result, (a, b, result)
        assert from_be(result["sum"]) == (a + b) % N, (a, b)
        assert from_be(result["difference"]) == (a - b) % N, (a, b)
        assert from_be(result["product"]) == (a * b) % N, (a, b)
        assert from_be(result["negation"]) == (-a) % N, a
        assert result["equal"] == (a == b)


def test_scalar_inverse_matches_pow(arithmetic):
    for (a, _), result in arithmetic:
        if a == 0:
            assert error_name(result["inverse"]) == "zeroScalar"
        else:
            assert from_be(result["inverse"]) == pow(a, -1, N), a


def test_point_operations_match_coincurve(arithmetic):
    for (a, b), result in arithmetic:
        pa, pb = cc_point(a), cc_point(b)
        assert ours(result["aG"]) == hex_of(pa), a
        assert ours(result["aGUncompressed"]) == hex_of(pa, compressed=False), a
        assert ours(result["negatedAG"]) == hex_of(cc_point(-a)), a
        assert ours(result["aGPlusBG"]) == hex_of(cc_add(pa, pb, (a + b) % N == 0)), (a, b)
        assert ours(result["aGMinusBG"]) == hex_of(cc_add(pa, cc_point(-b), (a - b) % N == 0)), (a, b)
        assert ours(result["bTimesAG"]) == hex_of(cc_multiply(pa, b)), (a, b)
        assert result["bTimesAGEqualsProductG"] is True


def test_point_operations_match_pure_python_reference(arithmetic):
    # The affine reference is slow-ish; the edge pairs with a random partner plus a few random pairs.
    for (a, b), result in arithmetic[::7]:
        pa, pb = ec_mul(a), ec_mul(b)
        assert ours(result["aG"]) == (sec1_compressed(pa) or IDENTITY)
        assert ours(result["aGPlusBG"]) == (sec1_compressed(ec_add(pa, pb)) or IDENTITY)
        assert ours(result["bTimesAG"]) == (sec1_compressed(ec_mul(b, pa) if pa else None) or IDENTITY)


def test_generator_is_the_standard_one(interop):
    [result] = interop.call("secp256k1", [{"a": be32(1), "b": be32(0)}])
    assert result["aGUncompressed"] == sec1_uncompressed((GX, GY))


def test_wide_reduction_matches_python_integers(interop):
    edges = [0, 1, N - 1, N, N + 1, 2**256 - 1, 2**256, N << 256, (N << 256) + N, (N - 1) << 256 | (N - 1),
             2**512 - 1, (2**256 - 1) * N]
    values = edges + [int.from_bytes(os.urandom(64), "big") for _ in range(40)]
    cases = [{"a": be32(1), "b": be32(1), "wide": v.to_bytes(64, "big").hex()} for v in values]
    for value, result in zip(values, interop.call("secp256k1", cases)):
        assert from_be(result["wide"]) == value % N, hex(value)


def test_narrow_reduction_matches_python_integers(interop):
    values = [0, 1, N - 1, N, N + 1, N + 2, 2**256 - 1]
    values += [secrets.randbelow(2**256) for _ in range(20)] + [N + secrets.randbelow(2**256 - N) for _ in range(10)]
    cases = [{"a": be32(1), "b": be32(1), "narrow": be32(v)} for v in values]
    for value, result in zip(values, interop.call("secp256k1", cases)):
        assert from_be(result["narrow"]) == value % N, hex(value)


def test_power_matches_pow(interop):
    exponents = [b"", b"\x00", b"\x01", b"\x02", (N - 2).to_bytes(32, "big"), (N - 1).to_bytes(32, "big")]
    exponents += [os.urandom(secrets.randbelow(40)) for _ in range(10)]
    bases = [secrets.randbelow(N) for _ in exponents]
    cases = [{"a": be32(a), "b": be32(1), "exponent": e.hex()} for a, e in zip(bases, exponents)]
    for a, e, result in zip(bases, exponents, interop.call("secp256k1", cases)):
        assert from_be(result["power"]) == pow(a, int.from_bytes(e, "big"), N), (a, e.hex())


def test_out_of_range_scalars_are_rejected(interop):
    bad = [N, N + 1, 2**256 - 1]
    cases = [{"a": be32(v), "b": be32(1)} for v in bad] + [{"a": be32(1), "b": be32(N)}]
    cases += [{"a": "00" * 31, "b": be32(1)}, {"a": "00" * 33, "b": be32(1)}]
    names = [error_name(r) for r in interop.call("secp256k1", cases)]
    assert names == ["scalarOutOfRange"] * 4 + ["invalidLength"] * 2


# ---------------------------------------------------------------- point decoding


def random_point() -> tuple[int, int]:
    return ec_mul(random_nonzero_below(N))


def encode(prefix: int, x: int, y: int | None = None) -> str:
    data = bytes([prefix]) + x.to_bytes(32, "big")
    if y is not None:
        data += y.to_bytes(32, "big")
    return data.hex()


def non_residue_x() -> int:
    """An x < p with x³ + 7 not a square: no point has it."""
    while True:
        x = secrets.randbelow(P)
        if lift_x(x) is None:
            return x


def test_valid_encodings_round_trip_and_match_coincurve(interop):
    points = [(GX, GY)] + [random_point() for _ in range(30)]
    encodings = [sec1_compressed(p) for p in points] + [sec1_uncompressed(p) for p in points]
    for encoding, result in zip(encodings, interop.call("secp256k1-decode", encodings)):
        expected = coincurve.PublicKey(bytes.fromhex(encoding))
        assert result["compressed"] == expected.format(compressed=True).hex()
        assert result["uncompressed"] == expected.format(compressed=False).hex()
        if len(encoding) == 66:
            assert result["strictCompressed"] == encoding
        else:
            assert error_name(result["strictCompressed"]) == "invalidLength"


def invalid_encodings() -> list[tuple[str, str]]:
    """(hex, reason) pairs that must not decode."""
    x, y = random_point()
    x_off = non_residue_x()
    x_small = 1
    while lift_x(x_small) is None:  # the least valid x; p + x_small is a non-canonical alias < 2^256
        x_small += 1
    _, y_small = lift_x(x_small)
    cases = [
        (encode(0x06 | (y & 1), x, y), "hybrid, right parity"),
        (encode(0x07 ^ (y & 1), x, y), "hybrid, wrong parity"),
        (encode(0x06, GX, GY), "hybrid generator"),
        (encode(0x02, P), "compressed x = p"),
        (encode(0x03, P + 1), "compressed x = p + 1"),
        (encode(0x02, 2**256 - 1), "compressed x = 2^256 - 1"),
        (encode(0x02, P + x_small), "compressed x = p + valid x (non-canonical)"),
        (encode(0x04, P + x_small, y_small), "uncompressed x ≥ p"),
        (encode(0x04, x, y + P) if y + P < 2**256 else encode(0x04, x, 2**256 - 1), "uncompressed y ≥ p"),
        (encode(0x02, x_off), "compressed, x off the curve"),
        (encode(0x03, x_off), "compressed odd, x off the curve"),
        (encode(0x04, x, (y + 1) % P), "uncompressed, y wrong"),
        (encode(0x04, x, (y + 2) % P), "uncompressed, y wrong (2)"),
        (encode(0x04, 0, 0), "uncompressed zeros"),
        ("00" * 33, "33 zero bytes"),
        ("00" * 65, "65 zero bytes"),
        ("00", "SEC1 infinity 0x00"),
        ("", "empty"),
        ("02", "prefix only"),
        (encode(0x02, x)[:-2], "32 bytes"),
        (encode(0x02, x) + "00", "34 bytes"),
        (encode(0x04, x, y)[:-2], "64 bytes"),
        (encode(0x04, x, y) + "00", "66 bytes"),
        (x.to_bytes(32, "big").hex() + y.to_bytes(32, "big").hex(), "raw x‖y, 64 bytes"),
        (encode(0x05, x), "prefix 0x05"),
        (encode(0x01, x), "prefix 0x01"),
        (encode(0x04, x), "prefix 0x04 with 33 bytes"),
        (encode(0x02, x, y), "prefix 0x02 with 65 bytes"),
    ]
    return cases


def test_invalid_encodings_are_rejected(interop):
    cases = invalid_encodings()
    results = interop.call("secp256k1-decode", [encoding for encoding, _ in cases])
    for (encoding, reason), result in zip(cases, results):
        assert error_name(result) in {"invalidPointEncoding", "invalidLength"}, (reason, encoding, result)


def test_invalid_encodings_are_also_rejected_by_coincurve_except_hybrid(interop):
    # libsecp256k1 (and so coincurve) accepts hybrid 0x06/0x07 keys with the right parity; MPCCrypto
    # rejects every hybrid encoding by design.
    for encoding, reason in invalid_encodings():
        if reason in {"hybrid, right parity", "hybrid generator"}:
            assert coincurve.PublicKey(bytes.fromhex(encoding)).format(compressed=False)[1:] == bytes.fromhex(encoding)[1:]
            continue
        with pytest.raises(ValueError):
            coincurve.PublicKey(bytes.fromhex(encoding))


def test_random_compressed_strings_agree_with_coincurve(interop):
    encodings = [(bytes([2 + secrets.randbelow(2)]) + os.urandom(32)).hex() for _ in range(60)]
    for encoding, result in zip(encodings, interop.call("secp256k1-decode", encodings)):
        try:
            expected = coincurve.PublicKey(bytes.fromhex(encoding)).format().hex()
        except ValueError:
            expected = None
        if expected is None:
            assert error_name(result) == "invalidPointEncoding", encoding
        else:
            assert result["compressed"] == expected == encoding


# ---------------------------------------------------------------- ECDSA


def signing_cases() -> list[tuple[int, bytes]]:
    keys = [1, 2, N - 1, N - 2] + [random_nonzero_below(N) for _ in range(40)]
    hashes = [b"\x00" * 32, b"\xff" * 32, N.to_bytes(32, "big"), (N - 1).to_bytes(32, "big")]
    hashes += [os.urandom(32) for _ in range(len(keys) - len(hashes))]
    return list(zip(keys, hashes))


@pytest.fixture(scope="module")
def signatures(interop):
    cases = signing_cases()
    results = interop.call("ecdsa-sign", [{"privateKey": be32(k), "hash": h.hex()} for k, h in cases])
    return list(zip(cases, results))


def test_our_signatures_verify_with_coincurve_and_are_low_s(signatures):
    for (key, digest), result in signatures:
        r, s = from_be(result["r"]), from_be(result["s"])
        assert 0 < r < N and 0 < s <= N // 2, "not low-S"
        assert result["lowS"] is True and result["selfVerified"] is True
        assert result["der"] == der_signature(r, s).hex()
        public = coincurve.PublicKey(bytes.fromhex(result["publicKey"]))
        assert public.format() == cc_point(key).format()
        assert public.verify(der_signature(r, s), digest, hasher=None)


def test_our_signatures_equal_coincurve_rfc6979(signatures):
    # Both use libsecp256k1's default RFC 6979 nonces: the signatures are byte-identical.
    for (key, digest), result in signatures:
        theirs = coincurve.PrivateKey(key.to_bytes(32, "big")).sign_recoverable(digest, hasher=None)
        assert theirs.hex() == result["r"] + result["s"] + f"{result['recoveryId']:02x}"


def test_recovery_matches_coincurve(signatures):
    for (_, digest), result in signatures:
        compact = bytes.fromhex(result["r"] + result["s"]) + bytes([result["recoveryId"]])
        recovered = coincurve.PublicKey.from_signature_and_message(compact, digest, hasher=None)
        assert recovered.format().hex() == result["publicKey"] == result["recovered"]


def test_our_signatures_verify_with_pure_python_ecdsa(signatures):
    api = KeyAPI(NativeECCBackend)
    for (key, digest), result in signatures[:12]:
        signature = api.Signature(vrs=(result["recoveryId"], from_be(result["r"]), from_be(result["s"])))
        public = api.PublicKey(cc_point(key).format(compressed=False)[1:])
        assert api.ecdsa_verify(digest, signature, public)
        assert api.ecdsa_recover(digest, signature) == public


def verify_cases(sources):
    """(ecdsa-verify case, compressed public key) for each (key, hash, r, s, recovery id)."""
    out = []
    for key, digest, r, s, v in sources:
        public = cc_point(key).format().hex()
        out.append(({"r": be32(r), "s": be32(s), "hash": digest.hex(), "publicKey": public, "recoveryId": v}, public))
    return out


def test_coincurve_signatures_verify_with_ours(interop):
    sources = []
    for _ in range(30):
        key, digest = random_nonzero_below(N), os.urandom(32)
        compact = coincurve.PrivateKey(key.to_bytes(32, "big")).sign_recoverable(digest, hasher=None)
        sources.append((key, digest, from_be(compact[:32].hex()), from_be(compact[32:64].hex()), compact[64]))
    cases = verify_cases(sources)
    for (case, public), result in zip(cases, interop.call("ecdsa-verify", [c for c, _ in cases])):
        assert result["valid"] is True and result["lowS"] is True
        assert result["recovered"] == public


def test_openssl_signatures_verify_with_ours_once_low_s(interop):
    # OpenSSL (through `cryptography`) signs with random nonces and does not normalize s: its high-S
    # signatures must fail with ours (libsecp256k1 semantics) and pass once s is replaced by n − s.
    cases, expected = [], []
    for _ in range(30):
        key, digest = random_nonzero_below(N), os.urandom(32)
        private = ec.derive_private_key(key, ec.SECP256K1())
        r, s = decode_dss_signature(private.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256()))))
        public = cc_point(key).format().hex()
        base = {"r": be32(r), "hash": digest.hex(), "publicKey": public}
        cases += [{**base, "s": be32(s)}, {**base, "s": be32(min(s, N - s))}]
        expected += [s <= N // 2, True]
    results = interop.call("ecdsa-verify", cases)
    assert [r["valid"] for r in results] == expected


def test_pure_python_signatures_verify_with_ours(interop):
    api = KeyAPI(NativeECCBackend)
    sources = []
    for _ in range(12):
        key, digest = random_nonzero_below(N), os.urandom(32)
        signature = api.ecdsa_sign(digest, api.PrivateKey(key.to_bytes(32, "big")))
        sources.append((key, digest, signature.r, signature.s, signature.v))
    cases = verify_cases(sources)
    for (case, public), result in zip(cases, interop.call("ecdsa-verify", [c for c, _ in cases])):
        assert result["valid"] is True, case
        assert result["recovered"] == public


def test_tampered_and_high_s_signatures_are_rejected(interop, signatures):
    cases = []
    for (key, digest), result in signatures[:10]:
        r, s = from_be(result["r"]), from_be(result["s"])
        base = {"r": be32(r), "s": be32(s), "hash": digest.hex(), "publicKey": result["publicKey"]}
        other = cc_point(2 * key).format().hex()  # never ±key (with e ≡ 0, −Q also verifies)
        flipped = bytes([digest[0] ^ 1]) + digest[1:]
        cases += [
            {**base, "s": be32(N - s)},  # high-S twin: rejected, as libsecp256k1 does
            {**base, "hash": flipped.hex()},
            {**base, "publicKey": other},
            {**base, "r": be32((r + 1) % N or 1)},
        ]
        # coincurve agrees that the high-S twin does not verify.
        assert not cc_point(key).verify(der_signature(r, N - s), digest, hasher=None)
    for case, result in zip(cases, interop.call("ecdsa-verify", cases)):
        assert result["valid"] is False, case
    bad = [{"r": be32(0), "s": be32(1)}, {"r": be32(1), "s": be32(0)}, {"r": be32(N), "s": be32(1)},
           {"r": be32(1), "s": be32(N)}, {"r": be32(1), "s": be32(1), "recoveryId": 4}]
    base = {"hash": "00" * 32, "publicKey": cc_point(1).format().hex()}
    names = [error_name(r) for r in interop.call("ecdsa-verify", [{**base, **b} for b in bad])]
    assert names == ["zeroScalar", "zeroScalar", "scalarOutOfRange", "scalarOutOfRange", "invalidSignatureEncoding"]


def test_signing_rejects_bad_inputs(interop):
    cases = [{"privateKey": be32(0), "hash": "00" * 32}, {"privateKey": be32(N), "hash": "00" * 32},
             {"privateKey": be32(1), "hash": "00" * 31}]
    names = [error_name(r) for r in interop.call("ecdsa-sign", cases)]
    assert names == ["zeroScalar", "scalarOutOfRange", "invalidLength"]
