"""FROST over secp256k1 with BIP340 signatures (docs/protocol/frost.md §18.3): threshold signatures made by the
Swift code in one process (dealer split, 2-of-2 and 2-of-3, with and without a BIP341 TapTweak), verified with
coincurve's x-only BIP340 verification (libsecp256k1) and with a Python BIP340 verifier written from the BIP
over `oracles` arithmetic; the Taproot output key checked against embit's `taproot_tweak` (pure Python)."""

from __future__ import annotations

import hashlib
import os
import random

from coincurve.keys import PublicKeyXOnly
from embit.ec import PublicKey

from oracles import N, P, ec_add, ec_mul, error_name, lift_x


def tagged_hash(tag: str, data: bytes) -> bytes:
    tag_digest = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_digest + tag_digest + data).digest()


def bip340_verify(xonly: bytes, message: bytes, signature: bytes) -> bool:
    """BIP340 Verify, from the BIP's description."""
    key = lift_x(int.from_bytes(xonly, "big"))
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    if key is None or r >= P or s >= N:
        return False
    e = int.from_bytes(tagged_hash("BIP0340/challenge", signature[:32] + xonly + message), "big") % N
    point = ec_add(ec_mul(s), ec_mul(N - e, key))
    return point is not None and point[1] % 2 == 0 and point[0] == r


def cases():
    out = []
    for threshold, parties, signer_sets in [(2, 2, ["0,1"]), (2, 3, ["0,1", "0,2", "1,2", "0,1,2"])]:
        for signers in signer_sets:
            for tweak in ["none", "bip86", "root"]:
                for _ in range(4):
                    case = {"seed": os.urandom(32).hex(), "threshold": threshold, "parties": parties,
                            "message": os.urandom(random.choice([32, 0, 5, 100])).hex(), "signers": signers}
                    if tweak == "bip86":
                        case["taproot"] = "yes"
                    elif tweak == "root":
                        case["merkleRoot"] = os.urandom(32).hex()
                    out.append(case)
    return out


def test_bip340_threshold_signatures_verify(interop):
    all_cases = cases()
    results = interop.call("frost-bip340-sign", all_cases)
    odd_group_keys = 0
    for case, result in zip(all_cases, results):
        assert error_name(result) is None, result
        message = bytes.fromhex(case["message"])
        signature = bytes.fromhex(result["signature"])
        output_key = bytes.fromhex(result["outputKey"])
        internal_key = bytes.fromhex(result["internalKey"])
        group_key = bytes.fromhex(result["groupKey"])
        odd_group_keys += group_key[0] == 3
        # The internal key is the x coordinate of the DKG group key, whatever its parity.
        assert internal_key == group_key[1:]
        if "taproot" in case or "merkleRoot" in case:
            root = bytes.fromhex(case.get("merkleRoot", ""))
            embit_output = PublicKey.from_xonly(internal_key).taproot_tweak(root).xonly()
            assert embit_output == output_key, case
            tweak = tagged_hash("TapTweak", internal_key + root)
            assert result["tweak"] == tweak.hex()
        else:
            assert output_key == internal_key
            assert int(result["tweak"], 16) == 0
        assert PublicKeyXOnly(output_key).verify(signature, message), case
        assert bip340_verify(output_key, message, signature), case
        assert not PublicKeyXOnly(output_key).verify(signature, message + b"x")
        assert not bip340_verify(output_key, message + b"x", signature)
    assert odd_group_keys > 0
