"""Session layer wire format (docs/protocol/session.md §0, §1.5, §3.1, §3.3, §4.2): Swift's SETUP frames
and P2P frames checked with `cryptography` and a Python rendering of the spec's formulas."""

from __future__ import annotations

import hashlib
import os
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from oracles import domain_frame

P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def hs(tag: str, *fields: bytes) -> bytes:
    """Hs(tag; f1..fk) with the session domain."""
    return hashlib.sha256(domain_frame("SilentShard-Session-v1", tag, list(fields))).digest()


def sigmsg(label: str, message: bytes) -> bytes:
    return b"SilentShard/v3/" + label.encode() + b"\x00" + message


def parse_tlv(payload: bytes) -> dict[int, bytes]:
    fields, offset, previous = {}, 0, -1
    while offset < len(payload):
        tag, length = payload[offset], struct.unpack(">H", payload[offset + 1 : offset + 3])[0]
        assert tag > previous
        previous = tag
        fields[tag] = payload[offset + 3 : offset + 3 + length]
        assert len(fields[tag]) == length
        offset += 3 + length
    return fields


def raw(public_key) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def setup_case(device_type: str) -> tuple[dict, object]:
    if device_type == "ed25519":
        secret = os.urandom(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(secret).public_key()
    else:
        scalar = int.from_bytes(os.urandom(32), "big") % (P256_N - 1) + 1
        secret = scalar.to_bytes(32, "big")
        public = ec.derive_private_key(scalar, ec.SECP256R1()).public_key()
    case = {
        "device_type": device_type, "device_key": secret.hex(), "cloud_key": os.urandom(32).hex(),
        "instance_id": os.urandom(32).hex(), "timestamp": 1_800_000_000_123, "mode": 2, "algorithm": 1,
        "operation": 1, "session_signing_seed": os.urandom(32).hex(), "session_x25519": os.urandom(32).hex(),
    }
    return case, public


def test_setup_frame_signature_and_hash(interop):
    cases = [setup_case(t) for t in ["ed25519", "p256"] for _ in range(4)]
    results = interop.call("session-setup", [c for c, _ in cases])
    for (case, public), result in zip(cases, results):
        frame = bytes.fromhex(result["frame"])
        header, payload = frame[:48], frame[48:-64]
        signature = frame[-64:]
        version, kind, sender, receiver, tag, reserved, seq, length = struct.unpack(">BBBBHHII", header[:16])
        assert (version, kind, sender, receiver, tag, reserved, seq) == (1, 0x01, 0, 0xFF, 0, 0, 0)
        assert length == len(payload) and header[16:] == bytes.fromhex(case["instance_id"])
        assert result["setup_hash"] == hs("setup", header + payload).hex()
        fields = parse_tlv(payload)
        assert fields[0x01] == b"\x02" and fields[0x02] == b"\x01" and fields[0x03] == b"\x01"
        assert fields[0x05] == struct.pack(">Q", case["timestamp"])
        assert fields[0x08].hex() == case["cloud_key"]
        assert fields[0x0A] == b"\x03\x02" and fields[0x0B] == b"\x03\x00\x01\x02"
        message = sigmsg("setup", header + payload)
        if case["device_type"] == "ed25519":
            assert fields[0x06] == b"\x01" + raw(public)
            public.verify(signature, message)
        else:
            encoded = public.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
            assert fields[0x06] == b"\x02" + encoded
            r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
            public.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
        seed = bytes.fromhex(case["session_signing_seed"])
        xpk = raw(x25519.X25519PrivateKey.from_private_bytes(bytes.fromhex(case["session_x25519"])).public_key())
        assert fields[0x07] == raw(ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key()) + xpk


def p2p_key(setup_hash: bytes, s: int, r: int, xsk_s: x25519.X25519PrivateKey, xpk_r: bytes) -> bytes:
    xpk_s = raw(xsk_s.public_key())
    ss = xsk_s.exchange(x25519.X25519PublicKey.from_public_bytes(xpk_r))
    return hs("p2p", setup_hash, bytes([s]), bytes([r]), xpk_s, xpk_r, ss)


def test_p2p_frames_both_directions(interop):
    app, node = x25519.X25519PrivateKey.generate(), x25519.X25519PrivateKey.generate()
    app_sk = app.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    setup_hash, instance_id = os.urandom(32), os.urandom(32)
    plaintexts = [b"", b"x", os.urandom(100), os.urandom(4096)]
    base = {"local": 0, "peer": 1, "local_x25519": app_sk.hex(), "peer_x25519": raw(node.public_key()).hex(),
            "setup_hash": setup_hash.hex(), "instance_id": instance_id.hex(), "tag": 0x0102}
    # Swift seals app → node; Python opens with k_{0→1}.
    sealed = interop.call("session-p2p", [dict(base, mode="seal", seq=i * 7, data=p.hex()) for i, p in enumerate(plaintexts)])
    key = hs("p2p", setup_hash, b"\x00", b"\x01", raw(app.public_key()), raw(node.public_key()),
             node.exchange(app.public_key()))
    for i, (plaintext, result) in enumerate(zip(plaintexts, sealed)):
        frame = bytes.fromhex(result["frame"])
        header = frame[:48]
        assert header[:4] == bytes([1, 0x11, 0, 1]) and struct.unpack(">I", header[8:12])[0] == i * 7
        nonce = b"\x00" * 8 + struct.pack(">I", i * 7)
        aad = b"SilentShard/v3/p2p\x00" + header
        assert ChaCha20Poly1305(key).decrypt(nonce, frame[48:], aad) == plaintext
    # Python seals node → app; Swift opens; a frame under the other direction's key fails.
    back_key = p2p_key(setup_hash, 1, 0, node, raw(app.public_key()))
    frames = []
    for seq, plaintext in enumerate(plaintexts):
        header = struct.pack(">BBBBHHII", 1, 0x11, 1, 0, 0x0102, 0, seq, len(plaintext)) + instance_id
        nonce = b"\x00" * 8 + struct.pack(">I", seq)
        frames.append(header + ChaCha20Poly1305(back_key).encrypt(nonce, plaintext, b"SilentShard/v3/p2p\x00" + header))
    wrong = frames[1][:48] + ChaCha20Poly1305(key).encrypt(b"\x00" * 11 + b"\x01", b"x", b"SilentShard/v3/p2p\x00" + frames[1][:48])
    opened = interop.call("session-p2p", [dict(base, mode="open", seq=0, data=f.hex()) for f in frames + [wrong]])
    for plaintext, result in zip(plaintexts, opened):
        assert result["plaintext"] == plaintext.hex()
    assert "error" in opened[-1]
