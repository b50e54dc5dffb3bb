"""P-256 ECDSA with SHA-256: Swift `P256` against `cryptography` (OpenSSL), both directions, with
raw r‖s and DER signatures."""

from __future__ import annotations

import os
import secrets

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from oracles import P256_N, be32, error_name, from_be

ECDSA_SHA256 = ec.ECDSA(hashes.SHA256())

MESSAGE_LENGTHS = [0, 1, 32, 55, 64, 200]


def imported(results: list) -> list:
    """The results, after checking that no valid key was refused as `invalidKey` (as happened while
    EVPKey handed OpenSSL's OSSL_PARAM_BLD temporary C strings)."""
    refused = [r for r in results if error_name(r) == "invalidKey"]
    assert not refused, f"{len(refused)}/{len(results)} valid keys refused: {refused[0]}"
    return results


def public_bytes(key: ec.EllipticCurvePublicKey, compressed: bool = False) -> str:
    encoding = serialization.PublicFormat.CompressedPoint if compressed else serialization.PublicFormat.UncompressedPoint
    return key.public_bytes(serialization.Encoding.X962, encoding).hex()


def reference_key(scalar: int) -> ec.EllipticCurvePrivateKey:
    return ec.derive_private_key(scalar, ec.SECP256R1())


@pytest.fixture(scope="module")
def signatures(interop):
    scalars = [1, 2, P256_N - 1] + [1 + secrets.randbelow(P256_N - 1) for _ in range(27)]
    messages = [os.urandom(MESSAGE_LENGTHS[i % len(MESSAGE_LENGTHS)]) for i in range(len(scalars))]
    cases = [{"privateKey": be32(k), "message": m.hex()} for k, m in zip(scalars, messages)]
    return list(zip(scalars, messages, interop.call("p256-sign", cases)))


def signed(signatures):
    """The signing results, checked for refused keys."""
    imported([result for _, _, result in signatures])
    return signatures


def test_public_keys_match_cryptography(signatures):
    for scalar, _, result in signed(signatures):
        public = reference_key(scalar).public_key()
        assert result["publicKey"] == public_bytes(public)
        assert result["compressedPublicKey"] == public_bytes(public, compressed=True)


def test_our_signatures_verify_with_cryptography(signatures):
    for scalar, message, result in signed(signatures):
        raw = bytes.fromhex(result["raw"])
        r, s = from_be(raw[:32].hex()), from_be(raw[32:].hex())
        assert 0 < r < P256_N and 0 < s < P256_N
        assert bytes.fromhex(result["der"]) == encode_dss_signature(r, s)  # strict DER, same as OpenSSL's
        public = reference_key(scalar).public_key()
        public.verify(bytes.fromhex(result["der"]), message, ECDSA_SHA256)  # raises if invalid


def test_cryptography_signatures_verify_with_ours(interop):
    cases = []
    for i in range(30):
        key, message = ec.generate_private_key(ec.SECP256R1()), os.urandom(MESSAGE_LENGTHS[i % len(MESSAGE_LENGTHS)])
        der = key.sign(message, ECDSA_SHA256)
        r, s = decode_dss_signature(der)
        public = public_bytes(key.public_key(), compressed=i % 2 == 1)
        cases.append({"publicKey": public, "message": message.hex(), "signature": der.hex(), "encoding": "der"})
        cases.append({"publicKey": public, "message": message.hex(), "signature": be32(r) + be32(s), "encoding": "raw"})
    for case, result in zip(cases, imported(interop.call("p256-verify", cases))):
        assert result["valid"] is True, case
        expected = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(case["publicKey"]))
        assert result["publicKey"] == public_bytes(expected)


def test_tampered_signatures_rejected_by_both(interop, signatures):
    cases, expected = [], []
    for scalar, message, result in signed(signatures)[:10]:
        raw = bytes.fromhex(result["raw"])
        r, s = from_be(raw[:32].hex()), from_be(raw[32:].hex())
        other = public_bytes(reference_key(scalar + 1 if scalar + 1 < P256_N else 1).public_key())
        variants = [  # (public key, message, r, s, valid)
            (result["publicKey"], message + b"\x00", r, s, False),
            (result["publicKey"], message, r, (s + 1) % P256_N or 1, False),
            (other, message, r, s, False),
            # ECDSA over P-256 has no low-S rule: (r, n − s) verifies too, with both libraries.
            (result["publicKey"], message, r, P256_N - s, True),
        ]
        for key, text, r_value, s_value, valid in variants:
            cases.append({"publicKey": key, "message": text.hex(), "signature": be32(r_value) + be32(s_value),
                          "encoding": "raw"})
            expected.append(valid)
            reference = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(key))
            der = encode_dss_signature(r_value, s_value)
            if valid:
                reference.verify(der, text, ECDSA_SHA256)
            else:
                with pytest.raises(InvalidSignature):
                    reference.verify(der, text, ECDSA_SHA256)
    assert [r["valid"] for r in imported(interop.call("p256-verify", cases))] == expected


def test_malformed_signatures_are_errors(interop, signatures):
    scalar, message, result = signed(signatures)[3]
    raw = bytes.fromhex(result["raw"])
    der = bytes.fromhex(result["der"])
    r_part = der[2 : 4 + der[3]]
    s_part = der[4 + der[3] :]
    padded_r = b"\x02" + bytes([r_part[1] + 1]) + b"\x00" + r_part[2:]  # non-minimal INTEGER
    non_strict = [
        der + b"\x00",  # trailing byte
        b"\x30\x81" + bytes([der[1]]) + der[2:],  # long-form length
        b"\x30" + bytes([len(padded_r) + len(s_part)]) + padded_r + s_part,
        der[:-1],
        b"",
        b"\x30\x06\x02\x01\x00\x02\x01\x01",  # r = 0
        encode_dss_signature(P256_N, 1),  # r = n
    ]
    raws = [
        (be32(0) + be32(1), "invalidSignatureEncoding"),
        (be32(1) + be32(P256_N), "invalidSignatureEncoding"),
        (be32(2**256 - 1) + be32(1), "invalidSignatureEncoding"),
        (raw.hex()[:-2], "invalidLength"),
    ]
    base = {"publicKey": result["publicKey"], "message": message.hex()}
    cases = [{**base, "signature": d.hex(), "encoding": "der"} for d in non_strict]
    cases += [{**base, "signature": r, "encoding": "raw"} for r, _ in raws]
    names = [error_name(r) for r in imported(interop.call("p256-verify", cases))]
    assert names == ["invalidSignatureEncoding"] * len(non_strict) + [name for _, name in raws]


def test_bad_keys_are_errors(interop):
    private = [be32(0), be32(P256_N), be32(2**256 - 1), "01" * 31]
    names = [error_name(r) for r in interop.call("p256-sign", [{"privateKey": k, "message": ""} for k in private])]
    assert names == ["invalidKey", "invalidKey", "invalidKey", "invalidLength"]
    point = bytes.fromhex(public_bytes(ec.generate_private_key(ec.SECP256R1()).public_key()))
    publics = [
        bytes([point[0]]) + point[1:64] + bytes([point[64] ^ 1]),  # off the curve
        bytes([0x06 | (point[64] & 1)]) + point[1:],  # hybrid
        b"\x02" + b"\xff" * 32,  # x ≥ p
        point[:33],  # 0x04 with 33 bytes
        b"\x00",
    ]
    cases = [{"publicKey": p.hex(), "message": "", "signature": be32(1) * 2, "encoding": "raw"} for p in publics]
    assert [error_name(r) for r in interop.call("p256-verify", cases)] == ["invalidKey"] * len(publics)
