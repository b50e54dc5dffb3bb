"""`silentshard demo --json`: the duo runs against an embedded node and the trio runs against embedded
nodes A and B (signatures by S = {0, 1} and S = {0, 2}, a presignature finished over HTTP POST, a
signature after recovery (both algorithms), an export over the WebSocket), checked by independent libraries.

ECDSA signatures verify with coincurve and recover the child public key from (r, s, v); the child key is
bip-utils' BIP-32 public derivation of (publicKey, chainCode, path). EdDSA signatures verify with
`cryptography` under the child key, which is bip-utils' BIP32-Ed25519 (Khovratovich–Law) derivation.
The exported keys (the app's request relayed to the node's export POST, then combined) are checked
with coincurve (ECDSA: PrivateKey(privateKey).public_key == publicKey, and a signature verifies) and
pure-Python Ed25519 arithmetic (EdDSA: the little-endian *scalar* a with a·B == publicKey; a signature
made from a verifies with `cryptography`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
from pathlib import Path

from bip_utils import Bip32KeyData, Bip32KholawEd25519, Bip32Secp256k1
from coincurve import PrivateKey, PublicKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from oracles import ED_BASE, L, ed_encode, ed_mul

REPO_ROOT = Path(__file__).resolve().parent.parent
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def demo(*arguments: str) -> list[dict]:
    binary = Path(os.environ.get("SILENTSHARD_CLI", REPO_ROOT / ".build/debug/silentshard"))
    process = subprocess.run([str(binary), "demo", "--json", *arguments], capture_output=True, timeout=600)
    assert process.returncode == 0, process.stderr.decode(errors="replace")[-2000:]
    return json.loads(process.stdout)["runs"]


def child_key(run: dict) -> bytes:
    path = run["path"]
    if run["algorithm"] == "ecdsa":
        parent = Bip32Secp256k1.FromPublicKey(bytes.fromhex(run["publicKey"]), Bip32KeyData(chain_code=bytes.fromhex(run["chainCode"])))
        return parent.DerivePath(path[2:]).PublicKey().RawCompressed().ToBytes() if path != "m" else bytes.fromhex(run["publicKey"])
    parent = Bip32KholawEd25519.FromPublicKey(bytes.fromhex(run["publicKey"]), Bip32KeyData(chain_code=bytes.fromhex(run["chainCode"])))
    key = parent.DerivePath(path[2:]).PublicKey() if path != "m" else parent.PublicKey()
    return key.RawCompressed().ToBytes()[-32:]


def check_signature_run(run: dict) -> None:
    assert run["verified"] is True
    if run["operation"] == "signHardDerived":
        # A threshold hard child (dkls23.md §15) is not a BIP32 child: check the signature under the key
        # the run names, and that it is neither the root key nor its soft child at the demo's path.
        child = bytes.fromhex(run["childPublicKey"])
        assert run["childPublicKey"] != run["publicKey"] and "'" in run["path"]
    else:
        child = child_key(run)
    assert child.hex() == run["childPublicKey"]
    message = bytes.fromhex(run["message"])
    signature = bytes.fromhex(run["signature"])
    if run["algorithm"] == "ecdsa":
        r, s, v = signature[:32], signature[32:], run["recoveryId"]
        assert int.from_bytes(s, "big") <= N // 2
        recovered = PublicKey.from_signature_and_message(r + s + bytes([v]), message, hasher=None)
        assert recovered.format(compressed=True) == child
        assert PublicKey(child).verify(_der(r, s), message, hasher=None)
    else:
        Ed25519PublicKey.from_public_bytes(child).verify(signature, message)


def check_export_run(run: dict, keygen: dict) -> None:
    assert run["verified"] is True and run["bytesSent"] > 0
    private_key = bytes.fromhex(run["privateKey"])
    public_key = bytes.fromhex(run["publicKey"])
    assert len(private_key) == 32
    assert public_key.hex() == keygen["publicKey"] and run["chainCode"] == keygen["chainCode"]
    message = os.urandom(32)
    if run["algorithm"] == "ecdsa":
        key = PrivateKey(private_key)
        assert key.public_key.format(compressed=True) == public_key
        assert PublicKey(public_key).verify(key.sign(message, hasher=None), message, hasher=None)
    else:
        a = int.from_bytes(private_key, "little")
        assert 0 < a < L  # a scalar, not an RFC 8032 seed
        assert ed_encode(ed_mul(a, ED_BASE)) == public_key.hex()
        r = secrets.randbelow(L - 1) + 1
        big_r = bytes.fromhex(ed_encode(ed_mul(r, ED_BASE)))
        k = int.from_bytes(hashlib.sha512(big_r + public_key + message).digest(), "little") % L
        signature = big_r + ((r + k * a) % L).to_bytes(32, "little")
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)


def _der(r: bytes, s: bytes) -> bytes:
    def integer(value: bytes) -> bytes:
        value = value.lstrip(b"\x00") or b"\x00"
        if value[0] & 0x80:
            value = b"\x00" + value
        return b"\x02" + bytes([len(value)]) + value
    body = integer(r) + integer(s)
    return b"\x30" + bytes([len(body)]) + body


TRIO_OPERATIONS = {
    "ecdsa": ("keygen", "sign", "signWithB", "refresh", "signAfterRefresh", "preSignFinal", "signAfterRecover", "export",
              "signHardDerived"),
    "eddsa": ("keygen", "sign", "signWithB", "refresh", "signAfterRefresh", "preSignFinal", "signAfterRecover", "export"),
}


def test_demo_json_default_path():
    runs = demo()
    duo = [run for run in runs if run["mode"] == "duo"]
    trio = [run for run in runs if run["mode"] == "trio"]
    assert len(duo) + len(trio) == len(runs)
    operations = [(run["algorithm"], run["operation"]) for run in duo]
    assert operations == [(a, o) for a in ("ecdsa", "eddsa")
                          for o in ("keygen", "sign", "refresh", "signAfterRefresh", "export")]
    assert [(run["algorithm"], run["operation"]) for run in trio] == [(a, o) for a in ("ecdsa", "eddsa")
                                                                      for o in TRIO_OPERATIONS[a]]
    for run in runs:
        assert run["verified"] is True and run["bytesSent"] > 0
        if "signature" in run:
            assert run["path"] == ("m/44'/60'/0'" if run["operation"] == "signHardDerived" else "m")
            check_signature_run(run)
    assert duo[0]["publicKey"] == duo[2]["publicKey"]  # refresh keeps the key
    for keygen, export in ((duo[0], duo[4]), (duo[5], duo[9])):
        check_export_run(export, keygen)
    for algorithm in ("ecdsa", "eddsa"):
        runs_of = [run for run in trio if run["algorithm"] == algorithm]
        # refresh, presign + final, recovery and export all keep the key; the export matches it.
        assert all(run["publicKey"] == runs_of[0]["publicKey"] for run in runs_of)
        check_export_run(next(run for run in runs_of if run["operation"] == "export"), runs_of[0])


def test_demo_json_with_path_and_message():
    path = "m/44/%d/0/%d" % (secrets.randbelow(2**31), secrets.randbelow(2**31))
    digest = hashlib.sha256(os.urandom(16)).digest()
    runs = demo("--path", path, "--message", digest.hex())
    signed = [run for run in runs if "signature" in run]
    assert len(signed) == 4 + 11  # duo: 2 per algorithm; trio: 6 ECDSA (+ preSignFinal, signAfterRecover, signHardDerived), 5 EdDSA
    for run in signed:
        assert run["path"] == ("m/44'/60'/0'" + path[1:] if run["operation"] == "signHardDerived" else path)
        assert run["message"] == digest.hex()
        check_signature_run(run)
    exports = [run for run in runs if run["operation"] == "export"]
    assert len(exports) == 4  # duo and trio, each algorithm
    for export in exports:
        keygen = next(run for run in runs if run["operation"] == "keygen" and run["algorithm"] == export["algorithm"]
                      and run["mode"] == export["mode"])
        check_export_run(export, keygen)
