"""DKLs23 threshold ECDSA signatures checked by independent libraries.

Every signature the Swift protocol produces (keygen and signing among 2-of-2, 2-of-3 and 3-of-5
parties, run in one process by the interop binary) must verify with coincurve, recover to the same
public key from (r, s, v), verify with eth-keys' pure-Python ECDSA, and be low-S. Soft derivation
must equal bip-utils' BIP-32 public derivation.
"""

from __future__ import annotations

import hashlib
import os
import secrets

import pytest
from bip_utils import Bip32KeyData, Bip32Secp256k1
from coincurve import PublicKey
from eth_keys import keys

N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

CONFIGURATIONS = [
    # (n, t, signer sets)
    (2, 2, [[0, 1]]),
    (3, 2, [[0, 1], [0, 2], [1, 2], [0, 1, 2]]),
    (5, 3, [[0, 1, 2], [0, 2, 4], [1, 3, 4]]),
]


def check_signature(public_key: bytes, digest: bytes, signature: dict) -> None:
    r, s, v = bytes.fromhex(signature["r"]), bytes.fromhex(signature["s"]), signature["v"]
    assert int.from_bytes(s, "big") <= N // 2, "not low-S"
    key = PublicKey(public_key)
    assert key.verify(bytes.fromhex(signature["der"]), digest, hasher=None)
    recovered = PublicKey.from_signature_and_message(r + s + bytes([v]), digest, hasher=None)
    assert recovered.format(compressed=True) == public_key
    eth_signature = keys.Signature(vrs=(v, int.from_bytes(r, "big"), int.from_bytes(s, "big")))
    eth_key = keys.PublicKey(key.format(compressed=False)[1:])
    assert eth_signature.verify_msg_hash(digest, eth_key)
    assert eth_signature.recover_public_key_from_msg_hash(digest) == eth_key


@pytest.mark.parametrize("n,t,signer_sets", CONFIGURATIONS)
def test_threshold_signatures_verify_independently(interop, n, t, signer_sets):
    seed = secrets.randbelow(2**31)
    for signers in signer_sets:
        digests = [hashlib.sha256(os.urandom(40)).digest() for _ in range(2)]
        [result] = interop.call("dkls-sign", [{
            "n": n, "t": t, "seed": seed, "signers": signers, "hashes": [d.hex() for d in digests],
        }])
        assert "error" not in result, result
        public_key = bytes.fromhex(result["publicKey"])
        assert bytes.fromhex(result["derivedKey"]) == public_key
        for digest, signature in zip(digests, result["signatures"]):
            check_signature(public_key, digest, signature)


def test_soft_derived_signatures_match_bip32(interop):
    path = "m/44/60/0/0/%d" % secrets.randbelow(2**31)
    digest = hashlib.sha256(b"derived").digest()
    [result] = interop.call("dkls-sign", [{
        "n": 3, "t": 2, "seed": secrets.randbelow(2**31), "signers": [1, 2], "path": path, "hashes": [digest.hex()],
    }])
    assert "error" not in result, result
    parent = Bip32Secp256k1.FromPublicKey(
        bytes.fromhex(result["publicKey"]), Bip32KeyData(chain_code=bytes.fromhex(result["chainCode"]))
    )
    child = parent.DerivePath(path[2:])
    assert child.PublicKey().RawCompressed().ToBytes().hex() == result["derivedKey"]
    assert child.ChainCode().ToBytes().hex() == result["derivedChainCode"]
    check_signature(bytes.fromhex(result["derivedKey"]), digest, result["signatures"][0])


def test_ckdpub_matches_bip_utils_for_random_paths(interop):
    cases, expected = [], []
    for _ in range(20):
        parent_private = Bip32Secp256k1.FromSeed(os.urandom(32))
        public_key = parent_private.PublicKey().RawCompressed().ToBytes()
        chain_code = parent_private.ChainCode().ToBytes()
        depth = 1 + secrets.randbelow(6)
        path = "m/" + "/".join(str(secrets.randbelow(2**31)) for _ in range(depth))
        child = Bip32Secp256k1.FromPublicKey(public_key, Bip32KeyData(chain_code=chain_code)).DerivePath(path[2:])
        cases.append({"publicKey": public_key.hex(), "chainCode": chain_code.hex(), "path": path})
        expected.append((child.PublicKey().RawCompressed().ToBytes().hex(), child.ChainCode().ToBytes().hex()))
    results = interop.call("bip32-ckdpub", cases)
    for result, (key, chain_code) in zip(results, expected):
        assert result == {"publicKey": key, "chainCode": chain_code}


def test_hardened_and_malformed_paths_are_refused(interop):
    key = Bip32Secp256k1.FromSeed(os.urandom(32))
    base = {"publicKey": key.PublicKey().RawCompressed().ToBytes().hex(), "chainCode": key.ChainCode().ToBytes().hex()}
    results = interop.call("bip32-ckdpub", [dict(base, path=p) for p in ["m/1'", "m/1h", "m/01", "1/2", "m/2147483648"]])
    for result in results:
        assert result.get("error") == "invalidInput", result
