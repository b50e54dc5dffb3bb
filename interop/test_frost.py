"""FROST(Ed25519, SHA-512): whole in-process DKG/import/refresh + signing runs of the Swift code,
verified with `cryptography` (OpenSSL RFC 8032 verification); soft derivation against bip-utils'
BIP32-Ed25519 (Khovratovich–Law) public derivation; exported secrets against Python arithmetic."""

from __future__ import annotations

import itertools
import os
import random

import pytest
from bip_utils import Bip32KeyData, Bip32KholawEd25519
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from oracles import ED_BASE, L, ed25519_secret_scalar, ed_encode, ed_mul, error_name, from_le

CONFIGS = [(2, 2), (2, 3), (3, 5)]


def verifies(public_key: str, message: bytes, signature: str) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key)).verify(bytes.fromhex(signature), message)
        return True
    except InvalidSignature:
        return False


def random_path(depth: int) -> str:
    return "/".join(["m"] + [str(random.randrange(2**31)) for _ in range(depth)])


def bip_utils_public(public_key: str, chain_code: str, path: str) -> str:
    node = Bip32KholawEd25519.FromPublicKey(bytes.fromhex(public_key), Bip32KeyData(chain_code=bytes.fromhex(chain_code)))
    if path != "m":
        node = node.DerivePath(path[2:])
    return node.PublicKey().RawCompressed().ToBytes()[1:].hex()


def test_dkg_and_sign_every_signer_set(interop):
    cases = []
    for t, n in CONFIGS:
        for signers in itertools.combinations(range(n), t):
            message = os.urandom(random.choice([0, 1, 32, 100]))
            cases.append({"seed": os.urandom(32).hex(), "threshold": t, "parties": n, "message": message.hex(),
                          "signers": ",".join(map(str, signers))})
    results = interop.call("frost-sign", cases)
    for case, result in zip(cases, results):
        assert error_name(result) is None, result
        assert result["derivedPublicKey"] == result["publicKey"]
        assert verifies(result["publicKey"], bytes.fromhex(case["message"]), result["signature"]), case
        assert not verifies(result["publicKey"], bytes.fromhex(case["message"]) + b"x", result["signature"])
        # The exported secret is the discrete log of the public key.
        assert ed_encode(ed_mul(from_le(result["exported"]), ED_BASE)) == result["publicKey"]


def test_refresh_then_sign(interop):
    cases = [{"seed": os.urandom(32).hex(), "threshold": t, "parties": n, "message": "00ff", "refresh": True}
             for t, n in CONFIGS]
    for case, result in zip(cases, interop.call("frost-sign", cases)):
        assert verifies(result["publicKey"], b"\x00\xff", result["signature"]), result


def test_import_rfc8032_seed_and_scalar(interop):
    cases = []
    for t, n in CONFIGS:
        seed = os.urandom(32)
        chain_code = os.urandom(32).hex()
        cases.append(({"seed": os.urandom(32).hex(), "threshold": t, "parties": n, "message": "6869",
                       "importSeed": seed.hex(), "chainCode": chain_code, "importer": n - 1, "path": "m/0/7"},
                      Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw().hex(),
                      ed25519_secret_scalar(seed) % L))
        scalar = random.randrange(1, L)
        cases.append(({"seed": os.urandom(32).hex(), "threshold": t, "parties": n, "message": "6869",
                       "importScalar": scalar.to_bytes(32, "little").hex(), "chainCode": chain_code},
                      ed_encode(ed_mul(scalar, ED_BASE)), scalar))
    results = interop.call("frost-sign", [c for c, _, _ in cases])
    for (case, expected_key, expected_scalar), result in zip(cases, results):
        assert error_name(result) is None, result
        assert result["publicKey"] == expected_key
        assert result["chainCode"] == case["chainCode"]
        assert from_le(result["exported"]) == expected_scalar
        path = case.get("path", "m")
        assert result["derivedPublicKey"] == bip_utils_public(expected_key, case["chainCode"], path)
        assert verifies(result["derivedPublicKey"], b"hi", result["signature"])


def test_derived_keys_match_bip_utils_and_signatures_verify(interop):
    cases = [{"seed": os.urandom(32).hex(), "threshold": t, "parties": n, "message": os.urandom(20).hex(),
              "path": random_path(random.randrange(1, 6))} for t, n in CONFIGS for _ in range(4)]
    for case, result in zip(cases, interop.call("frost-sign", cases)):
        assert error_name(result) is None, result
        assert result["derivedPublicKey"] == bip_utils_public(result["publicKey"], result["chainCode"], case["path"])
        assert verifies(result["derivedPublicKey"], bytes.fromhex(case["message"]), result["signature"])
        assert not verifies(result["publicKey"], bytes.fromhex(case["message"]), result["signature"])


def test_public_derivation_many_paths(interop):
    cases = []
    for _ in range(40):
        scalar = random.randrange(1, L)
        cases.append({"publicKey": ed_encode(ed_mul(scalar, ED_BASE)), "chainCode": os.urandom(32).hex(),
                      "path": random_path(random.randrange(0, 8))})
    cases.append({"publicKey": cases[0]["publicKey"], "chainCode": cases[0]["chainCode"], "path": "m/0/1/2147483647"})
    for case, result in zip(cases, interop.call("frost-derive", cases)):
        node = Bip32KholawEd25519.FromPublicKey(bytes.fromhex(case["publicKey"]),
                                                Bip32KeyData(chain_code=bytes.fromhex(case["chainCode"])))
        if case["path"] != "m":
            node = node.DerivePath(case["path"][2:])
        assert result["publicKey"] == node.PublicKey().RawCompressed().ToBytes()[1:].hex()
        assert result["chainCode"] == node.ChainCode().ToBytes().hex()
        # A′ = A + δ·B.
        tweak_point = ed_mul(from_le(result["tweak"]), ED_BASE)
        from oracles import ed_add, ed_decode
        assert ed_encode(ed_add(ed_decode(bytes.fromhex(case["publicKey"])), tweak_point)) == result["publicKey"]


def test_hardened_and_malformed_paths_are_refused(interop):
    key = ed_encode(ed_mul(5, ED_BASE))
    cases = [{"publicKey": key, "chainCode": "00" * 32, "path": p} for p in ["m/0'", "m/1h", "m/2147483648", "1/2", "m/01"]]
    for result in interop.call("frost-derive", cases):
        assert error_name(result) == "invalidInput", result
