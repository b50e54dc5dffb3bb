"""DKLs23 key lifecycle checked by independent libraries.

* xpub: the extended public keys the Swift SDK exports (`DKLsBIP32`) are parsed by bip-utils, whose
  own BIP-32 public derivation along random soft paths (depth 1-6) must give the same child xpubs.
* Ethereum: a legacy EIP-155 transaction hash (Keccak-256 from eth-utils, pycryptodome backend; note
  that hashlib.sha3_256 is NOT Keccak-256) is signed under a soft-derived key, a hard-derived key
  (section 15) and a soft child of the hard child; eth-keys recovers each signer address from (v, r, s).
* Export: the exported root key, its soft child (bip-utils private derivation from the exported
  chain code) and the exported hard child key are checked against the public keys.
"""

from __future__ import annotations

import hashlib
import secrets
import struct

import pytest
from bip_utils import Bip32KeyData, Bip32KeyNetVersions, Bip32Secp256k1
from eth_keys import keys
from eth_utils import keccak
from oracles import GX, GY, N, P, domain_frame, ec_add, ec_mul, lift_x, sec1_compressed


def random_soft_path(max_depth: int = 6) -> str:
    depth = 1 + secrets.randbelow(max_depth)
    return "m/" + "/".join(str(secrets.randbelow(2**31)) for _ in range(depth))


@pytest.mark.parametrize("n,t", [(2, 2), (3, 2)])
def test_exported_xpubs_match_bip_utils(interop, n, t):
    paths = [random_soft_path() for _ in range(12)]
    [result] = interop.call("dkls-xpub", [{"n": n, "t": t, "seed": secrets.randbelow(2**31), "paths": paths}])
    assert "error" not in result, result
    root = Bip32Secp256k1.FromExtendedKey(result["xpub"])
    assert root.PublicKey().RawCompressed().ToBytes().hex() == result["publicKey"]
    assert root.ChainCode().ToBytes().hex() == result["chainCode"]
    assert root.Depth().ToInt() == 0
    for child in result["children"]:
        expected = root.DerivePath(child["path"][2:])
        assert expected.PublicKey().ToExtended() == child["xpub"], child["path"]


# BIP32 version bytes (pub, priv) of testnet: "tpub…" / "tprv…".
TESTNET = Bip32KeyNetVersions(bytes.fromhex("043587cf"), bytes.fromhex("04358394"))


@pytest.mark.parametrize("n,t", [(2, 2), (3, 2)])
@pytest.mark.parametrize("network", ["mainnet", "testnet"])
def test_sdk_extended_public_keys_match_bip_utils(interop, n, t, network):
    """The SDK's public `Keyshare.extendedPublicKey(network:path:)` (every party's share agrees) at the root
    and at random soft paths is what bip-utils derives from the root xpub; hardened paths are refused."""
    paths = [random_soft_path() for _ in range(10)] + ["m/0'", "m/1/2h"]
    [result] = interop.call("keyshare-xpub", [{"n": n, "t": t, "seed": secrets.randbelow(2**31),
                                               "network": network, "paths": paths}])
    assert "error" not in result, result
    assert result["xpub"].startswith("xpub" if network == "mainnet" else "tpub")
    root = (Bip32Secp256k1.FromExtendedKey(result["xpub"]) if network == "mainnet"
            else Bip32Secp256k1.FromExtendedKey(result["xpub"], TESTNET))
    assert root.PublicKey().RawCompressed().ToBytes().hex() == result["publicKey"]
    assert root.ChainCode().ToBytes().hex() == result["chainCode"]
    assert root.Depth().ToInt() == 0
    for child in result["children"]:
        if "'" in child["path"] or "h" in child["path"]:
            assert "error" in child, child
            continue
        expected = root.DerivePath(child["path"][2:])
        assert expected.PublicKey().ToExtended() == child["xpub"], child["path"]


def rlp(item) -> bytes:
    """Minimal RLP (bytes and lists) for the transaction below."""
    if isinstance(item, list):
        body = b"".join(rlp(x) for x in item)
        return _length_prefix(len(body), 0xC0) + body
    if len(item) == 1 and item[0] < 0x80:
        return item
    return _length_prefix(len(item), 0x80) + item


def _length_prefix(length: int, offset: int) -> bytes:
    if length < 56:
        return bytes([offset + length])
    encoded = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([offset + 55 + len(encoded)]) + encoded


def uint(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""


def transaction_hash(chain_id: int = 1) -> bytes:
    """Keccak-256 of an unsigned legacy EIP-155 transfer."""
    to = secrets.token_bytes(20)
    fields = [uint(secrets.randbelow(1000)), uint(30 * 10**9), uint(21000), to, uint(10**16), b"",
              uint(chain_id), b"", b""]
    return keccak(rlp(fields))


def address(compressed_key: str) -> str:
    return keys.PublicKey.from_compressed_bytes(bytes.fromhex(compressed_key)).to_checksum_address()


def recovered_address(signature: dict, digest: bytes) -> str:
    r, s, v = int(signature["r"], 16), int(signature["s"], 16), signature["v"]
    assert s <= N // 2, "not low-S"
    sig = keys.Signature(vrs=(v, r, s))
    return sig.recover_public_key_from_msg_hash(digest).to_checksum_address()


def test_keccak_is_not_sha3():
    assert keccak(b"").hex() == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    assert hashlib.sha3_256(b"").digest() != keccak(b"")


@pytest.mark.parametrize("n,t,participants,signers", [
    (2, 2, [0, 1], [0, 1]),
    (3, 2, [0, 1, 2], [1, 2]),
    (3, 2, [0, 2], [0, 2]),
])
def test_ethereum_soft_and_hard_derived_signatures(interop, n, t, participants, signers):
    digest = transaction_hash()
    soft_path = "m/44/60/0/0/%d" % secrets.randbelow(2**31)
    case = {
        "n": n, "t": t, "seed": secrets.randbelow(2**31), "participants": participants, "signers": signers,
        "softPath": soft_path, "hardPath": "m/44'/60'/0'/0/%d" % secrets.randbelow(2**31),
        "belowPath": random_soft_path(3), "hash": digest.hex(),
    }
    [result] = interop.call("dkls-lifecycle", [case])
    assert "error" not in result, result

    # Soft child: bip-utils derives the same key from the root xpub data; eth-keys recovers its address.
    root = Bip32Secp256k1.FromPublicKey(bytes.fromhex(result["publicKey"]),
                                        Bip32KeyData(chain_code=bytes.fromhex(result["chainCode"])))
    soft = root.DerivePath(soft_path[2:])
    assert soft.PublicKey().RawCompressed().ToBytes().hex() == result["soft"]["publicKey"]
    assert soft.PublicKey().ToExtended() == result["soft"]["xpub"]
    assert recovered_address(result["soft"]["signature"], digest) == address(result["soft"]["publicKey"])

    # Hard child: a key not derivable from the xpub; its signature recovers to its address.
    hard_key = result["hard"]["publicKey"]
    assert hard_key != result["publicKey"]
    assert recovered_address(result["hard"]["signature"], digest) == address(hard_key)
    assert recovered_address(result["hard"]["signature"], digest) != address(result["publicKey"])

    # Soft derivation below the hard child is plain BIP-32 from (P', cc').
    hard = Bip32Secp256k1.FromPublicKey(bytes.fromhex(hard_key),
                                        Bip32KeyData(chain_code=bytes.fromhex(result["hard"]["chainCode"])))
    below = hard.DerivePath(case["belowPath"][2:])
    assert below.PublicKey().RawCompressed().ToBytes().hex() == result["below"]["publicKey"]
    assert recovered_address(result["below"]["signature"], digest) == address(result["below"]["publicKey"])

    # Export: the private keys match, and bip-utils' private soft derivation matches ours.
    exported = result["export"]
    private = keys.PrivateKey(bytes.fromhex(exported["privateKey"]))
    assert private.public_key.to_compressed_bytes().hex() == result["publicKey"]
    assert exported["chainCode"] == result["chainCode"]
    xprv = Bip32Secp256k1.FromPrivateKey(bytes.fromhex(exported["privateKey"]),
                                         Bip32KeyData(chain_code=bytes.fromhex(exported["chainCode"])))
    assert xprv.DerivePath(soft_path[2:]).PrivateKey().Raw().ToBytes().hex() == exported["softPrivateKey"]
    hard_private = keys.PrivateKey(bytes.fromhex(exported["hardPrivateKey"]))
    assert hard_private.public_key.to_compressed_bytes().hex() == hard_key
    assert exported["hardChainCode"] == result["hard"]["chainCode"]
    assert hard_private.public_key.to_checksum_address() == recovered_address(result["hard"]["signature"], digest)


def test_hardened_xpub_paths_are_refused(interop):
    results = interop.call("dkls-xpub", [{"n": 2, "t": 2, "seed": 1, "paths": [p]} for p in ["m/1'", "m/0/2h"]])
    for result in results:
        assert result.get("error") == "invalidInput", result


# ---------------------------------------------------------------- session.md §15 recomputed from the spec

PROTOCOL = "SilentShard-DKLs23-v1"


def h(tag: str, *fields: bytes) -> bytes:
    return hashlib.sha256(domain_frame(PROTOCOL, tag, list(fields))).digest()


def hq(tag: str, *fields: bytes) -> int:
    return int.from_bytes(hashlib.sha512(domain_frame(PROTOCOL, tag, list(fields))).digest(), "big") % N


def h2c(tag: str, message: bytes):
    for counter in range(256):
        point = lift_x(int.from_bytes(h(tag, message, struct.pack(">I", counter)), "big"))
        if point is not None:
            return point
    raise AssertionError("H2C failed")


def enc(point) -> bytes:
    return bytes.fromhex(sec1_compressed(point))


def dec(text: str):
    raw = bytes.fromhex(text)
    assert raw[0] in (2, 3)
    x, y = lift_x(int.from_bytes(raw[1:], "big"))
    return (x, y) if (y & 1) == (raw[0] & 1) else (x, P - y)


def path_bytes(path: str) -> bytes:
    indices = []
    for part in path.split("/")[1:]:
        hardened = part[-1] in "'h"
        indices.append(int(part.rstrip("'h")) | (0x80000000 if hardened else 0))
    return bytes([len(indices)]) + b"".join(struct.pack(">I", i) for i in indices)


def lagrange(i: int, subset: list[int], points: list[int]) -> int:
    num, den = 1, 1
    for k in subset:
        if k != i:
            num = num * points[k] % N
            den = den * (points[k] - points[i]) % N
    return num * pow(den, -1, N) % N


def test_path_bytes_and_h2c_known_answer():
    pb = path_bytes("m/44'/60'/0'/0/5")
    assert pb.hex() == "058000002c8000003c800000000000000000000005"
    assert enc(h2c("hd/h2c", enc((GX, GY)) + pb)).hex() == \
        "022bb389d277468e64cce80070cd0180b08b8696e1576693514400b5ece2876b90"


@pytest.mark.parametrize("n,t,participants", [(2, 2, [0, 1]), (3, 2, [0, 2]), (3, 2, [0, 1, 2])])
def test_hard_derivation_matches_an_independent_recomputation(interop, n, t, participants):
    path = "m/44'/60'/%d'/0/%d" % (secrets.randbelow(2**31), secrets.randbelow(2**31))
    instance, setup = secrets.token_bytes(32), secrets.token_bytes(32)
    [r] = interop.call("dkls-hard-derive", [{
        "n": n, "t": t, "seed": secrets.randbelow(2**31), "participants": participants, "path": path,
        "instanceId": instance.hex(), "setupHash": setup.hex(),
    }])
    assert "error" not in r, r
    assert r["child"]["agree"]
    pb = path_bytes(path)
    public_key = dec(r["publicKey"])
    hpt = h2c("hd/h2c", enc(public_key) + pb)
    subset = bytes([len(participants)] + participants)
    ctx = h("hd/ctx", setup, instance, bytes.fromhex(r["keyId"]), bytes.fromhex(r["generation"]), subset, pb)
    points = [int(x, 16) for x in r["evaluationPoints"]]
    vrf_shares = [dec(v) for v in r["vrfPublicShares"]]
    # The VRF public shares interpolate to V.
    v_sum = None
    for k in participants:
        v_sum = ec_add(v_sum, ec_mul(lagrange(k, participants, points), vrf_shares[k]))
    assert enc(v_sum).hex() == r["vrfPublicKey"]

    y = None
    assert sorted(m["from"] for m in r["messages"]) == participants
    for message in r["messages"]:
        k, payload = message["from"], bytes.fromhex(message["payload"])
        assert len(payload) == 129
        assert payload[:32] == ctx
        d = dec(payload[32:65].hex())
        c, z = int.from_bytes(payload[65:97], "big"), int.from_bytes(payload[97:129], "big")
        w = ec_mul(lagrange(k, participants, points), vrf_shares[k])
        t1 = ec_add(ec_mul(z), ec_mul(N - c, w))
        t2 = ec_add(ec_mul(z, hpt), ec_mul(N - c, d))
        assert c == hq("pok/dleq", ctx, bytes([k]), enc(hpt), enc(w), enc(d), enc(t1), enc(t2)), "DLEQ"
        y = ec_add(y, d)

    delta = hq("hd/tweak", enc(y), enc(public_key), pb)
    child = ec_add(public_key, ec_mul(delta))
    assert enc(child).hex() == r["child"]["publicKey"]
    assert h("hd/chaincode", enc(y), enc(public_key), pb).hex() == r["child"]["chainCode"]
    assert h("key-id", enc(child)).hex() == r["child"]["keyId"]
    assert h("hd/gen", bytes.fromhex(r["generation"]), enc(child)).hex() == r["child"]["generation"]
    for parent_share, child_share in zip(r["child"]["parentPublicShares"], r["child"]["publicShares"]):
        assert enc(ec_add(dec(parent_share), ec_mul(delta))).hex() == child_share
