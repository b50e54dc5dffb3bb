"""Issue 21: the chain helpers' artifacts, checked by the chains' own libraries (eth-keys, eth-hash)."""
import secrets

import pytest
from eth_hash.auto import keccak
from eth_keys import keys
from eth_keys.constants import SECPK1_N

from test_dkls_lifecycle import random_soft_path


def personal_hash(message: bytes) -> bytes:
    """EIP-191 version 0x45, computed here independently of the SDK."""
    return keccak(b"\x19Ethereum Signed Message:\n" + str(len(message)).encode() + message)


@pytest.mark.parametrize("path_kind", ["root", "soft"])
def test_personal_sign_recovers_to_the_address_with_eth_keys(interop, path_kind):
    """A threshold key's personal_sign signatures (root and a random soft child) recover, with eth-keys,
    to the EIP-55 address the SDK printed, which is the address eth-keys computes from the public key."""
    path = "m" if path_kind == "root" else random_soft_path()
    messages = [b"", "Sign in to example.com ✓".encode()] + [secrets.token_bytes(secrets.randbelow(300)) for _ in range(4)]
    [result] = interop.call("eth-personal-sign", [{"seed": secrets.randbelow(2**31), "path": path,
                                                   "messages": [m.hex() for m in messages]}])
    assert "error" not in result, result
    public_key = keys.PublicKey.from_compressed_bytes(bytes.fromhex(result["publicKey"]))
    assert public_key.to_checksum_address() == result["address"]
    for message, rsv in zip(messages, result["signatures"]):
        raw = bytes.fromhex(rsv)
        assert len(raw) == 65 and raw[64] in (27, 28)
        r, s, v = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:64], "big"), raw[64] - 27
        assert s <= SECPK1_N // 2, "EIP-2: low S"
        signature = keys.Signature(vrs=(v, r, s))
        recovered = signature.recover_public_key_from_msg_hash(personal_hash(message))
        assert recovered.to_checksum_address() == result["address"]
        assert signature.verify_msg_hash(personal_hash(message), public_key)
