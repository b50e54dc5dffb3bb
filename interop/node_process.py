"""A real `silentshard node` process and the session layer's wire format, for interop/test_node_raw.py.

Starts the built binary (SILENTSHARD_BIN) on 127.0.0.1:0 with a fresh node key, master key and
SQLite database in a temporary directory, and parses what the node sends back: frames
(docs/protocol/session.md §3.1), the REJECT payload (§4.5), the ACCEPT TLV (§4.4), and checks the node's
Ed25519 signatures over sigmsg(label, header ‖ payload) (session.md §0, §1.2) with `cryptography`.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from oracles import domain_frame

HEADER_BYTES = 48
KIND_SETUP, KIND_ACCEPT, KIND_REJECT = 0x01, 0x02, 0x03

# session.md §10 wire codes used here.
MALFORMED = 0x0101
UNSUPPORTED_VERSION = 0x0102
REPLAY = 0x0207
WRONG_CLUSTER = 0x020A


def sigmsg(label: str, message: bytes) -> bytes:
    """session.md §0: "SilentShard/v3/" ‖ label ‖ 0x00 ‖ m."""
    return b"SilentShard/v3/" + label.encode() + b"\x00" + message


def session_hash(tag: str, *fields: bytes) -> bytes:
    """session.md §0: Hs(tag; f1..fk) in the session domain."""
    return hashlib.sha256(domain_frame("SilentShard-Session-v1", tag, list(fields))).digest()


@dataclass
class Frame:
    version: int
    kind: int
    sender: int
    receiver: int
    tag: int
    reserved: int
    seq: int
    length: int
    instance_id: bytes
    header: bytes
    payload: bytes
    signature: bytes

    def signed_by(self, node_key: bytes, label: str) -> bool:
        """Strict Ed25519 check of the node's signature over sigmsg(label, header ‖ payload)."""
        try:
            Ed25519PublicKey.from_public_bytes(node_key).verify(self.signature, sigmsg(label, self.header + self.payload))
            return True
        except InvalidSignature:
            return False


def parse_signed_frame(data: bytes) -> tuple[Frame, bytes]:
    """The first frame of a bundle (a signed kind: payload ‖ 64-byte signature) and the rest."""
    assert len(data) >= HEADER_BYTES, f"{len(data)} bytes: shorter than a frame header"
    version, kind, sender, receiver, tag, reserved, seq, length = struct.unpack(">BBBBHHII", data[:16])
    end = HEADER_BYTES + length + 64
    assert len(data) >= end, f"frame announces {length} payload bytes, message has {len(data)}"
    frame = Frame(version, kind, sender, receiver, tag, reserved, seq, length, data[16:48], data[:48],
                  data[48:48 + length], data[48 + length:end])
    return frame, data[end:]


@dataclass
class Reject:
    code: int
    retry_after: int
    setup_hash: bytes
    node_key: bytes
    certificate: bytes | None
    detail: bytes


def parse_reject(payload: bytes) -> Reject:
    """session.md §4.5: u16 code ‖ u32 retry_after_s ‖ setup_hash (32) ‖ node_key (32) ‖ u8 has_cert ‖ [cert 142] ‖
    u16 detail_len ‖ detail; nothing may follow."""
    code, retry = struct.unpack(">HI", payload[:6])
    setup_hash, node_key = payload[6:38], payload[38:70]
    has_cert = payload[70]
    assert has_cert in (0, 1)
    offset = 71
    certificate = None
    if has_cert:
        certificate = payload[offset:offset + 142]
        offset += 142
    (detail_length,) = struct.unpack(">H", payload[offset:offset + 2])
    detail = payload[offset + 2:offset + 2 + detail_length]
    assert len(detail) == detail_length and offset + 2 + detail_length == len(payload), "REJECT payload length"
    return Reject(code, retry, setup_hash, node_key, certificate, detail)


def parse_tlv(payload: bytes) -> dict[int, bytes]:
    """session.md §4.1: u8 tag ‖ u16 length ‖ value, tags ascending."""
    fields, offset, previous = {}, 0, -1
    while offset < len(payload):
        tag, length = payload[offset], struct.unpack(">H", payload[offset + 1:offset + 3])[0]
        assert tag > previous, "TLV tags must ascend"
        previous = tag
        fields[tag] = payload[offset + 3:offset + 3 + length]
        assert len(fields[tag]) == length
        offset += 3 + length
    return fields


class NodeProcess:
    """`silentshard node --auth none` on a free loopback port (the node prints the port it bound)."""

    def __init__(self, binary: Path, directory: Path, max_message_size: int) -> None:
        self.max_message_size = max_message_size
        self.process = subprocess.Popen(
            [str(binary), "node", "--auth", "none", "--node-key", str(directory / "node.key"), "--generate-key",
             "--database", str(directory / "node.sqlite"), "--master-key", str(directory / "master.key"),
             "--listen", "127.0.0.1:0", "--max-message-size", str(max_message_size)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        port_line = self.process.stdout.readline()
        key_line = self.process.stdout.readline()
        port = re.search(r"listening on port (\d+)", port_line)
        key = re.search(r"\(Ed25519\): ([0-9a-f]{64})", key_line)
        if not (port and key):
            self.stop()
            raise RuntimeError(f"node did not start: {port_line!r} {key_line!r} {self.process.stderr.read()!r}")
        self.port = int(port.group(1))
        self.node_key = bytes.fromhex(key.group(1))
        self.base = f"ws://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def setup_request(interop, cloud_key: bytes, timestamp_ms: int, algorithm: int = 1, operation: int = 1) -> dict:
    """A duo keygen SETUP signed by a fresh Ed25519 device key, built by `silentshard-interop`
    (its frame format is checked independently in test_session.py)."""
    case = {
        "device_type": "ed25519", "device_key": os.urandom(32).hex(), "cloud_key": cloud_key.hex(),
        "instance_id": os.urandom(32).hex(), "timestamp": timestamp_ms, "mode": 1, "algorithm": algorithm,
        "operation": operation, "session_signing_seed": os.urandom(32).hex(), "session_x25519": os.urandom(32).hex(),
    }
    result = interop.call("session-setup", [case])[0]
    return {"frame": bytes.fromhex(result["frame"]), "setup_hash": bytes.fromhex(result["setup_hash"]),
            "instance_id": bytes.fromhex(case["instance_id"])}
