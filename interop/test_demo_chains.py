"""`silentshard demo --chains --json FILE`: Ethereum, Bitcoin (regtest) and Solana artifacts signed by the
demo's embedded duo and trio nodes, checked here with independent libraries.

Ethereum (eth-account / eth-keys): the address is EIP-55 of the public key; personal_sign and the EIP-712 v4
document (`encode_typed_data(full_message=…)`) recover to it; the raw type-2 transaction recovers to it
(`Account.recover_transaction`) and decodes to the JSON's fields. Bitcoin (embit): the address is the key's
regtest P2WPKH; every partial signature of the signed PSBT verifies over embit's own BIP-143 hash; the
extracted transaction parses, is the PSBT's (same txid), pays the listed recipient and its witnesses verify.
Solana (solders / cryptography): the address is base58 of the key; the wire transaction carries the message
and the signature verifies over it with Ed25519.

The binary: SILENTSHARD_BIN (or SILENTSHARD_CLI), default .build/debug/silentshard.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def cli() -> Path:
    path = Path(os.environ.get("SILENTSHARD_BIN") or os.environ.get("SILENTSHARD_CLI")
                or ".build/debug/silentshard")
    return path if path.is_absolute() else REPO_ROOT / path


def run_demo() -> list[dict]:
    with tempfile.TemporaryDirectory() as directory:
        file = Path(directory) / "chains.json"
        process = subprocess.run([str(cli()), "demo", "--chains", "--json", str(file)], capture_output=True,
                                 timeout=900)
        assert process.returncode == 0, process.stderr.decode(errors="replace")[-2000:]
        json.loads(process.stdout)  # the runs document is still printed
        return json.loads(file.read_text())["chains"]


def check_ethereum(entry: dict) -> None:
    from eth_account import Account
    from eth_account.messages import encode_defunct, encode_typed_data
    from eth_account.typed_transactions import TypedTransaction
    from eth_keys import keys
    from eth_utils import to_checksum_address
    from hexbytes import HexBytes

    public_key = keys.PublicKey.from_compressed_bytes(bytes.fromhex(entry["publicKey"]))
    address = entry["address"]
    assert public_key.to_checksum_address() == address and to_checksum_address(address) == address

    personal = entry["personalSign"]
    signature = bytes.fromhex(personal["signature"][2:])
    assert len(signature) == 65 and signature[64] in (27, 28)
    assert Account.recover_message(encode_defunct(text=personal["message"]), signature=signature) == address

    typed = entry["typedData"]
    document = typed["data"]
    assert document["domain"]["chainId"] == 1 and "verifyingContract" in document["domain"]
    assert document["message"]["from"]["wallet"] == address and isinstance(document["message"]["to"], list)
    signable = encode_typed_data(full_message=document)
    assert Account.recover_message(signable, signature=bytes.fromhex(typed["signature"][2:])) == address

    tx = entry["transaction"]
    raw = bytes.fromhex(tx["raw"][2:])
    assert raw[0] == 2 and tx["type"] == 2
    assert Account.recover_transaction(raw) == address
    fields = TypedTransaction.from_bytes(HexBytes(raw)).as_dict()
    assert fields["chainId"] == tx["chainId"] == 1
    assert fields["nonce"] == tx["nonce"]
    assert fields["maxPriorityFeePerGas"] == tx["maxPriorityFeePerGas"] == 10**9
    assert fields["maxFeePerGas"] == tx["maxFeePerGas"] == 30 * 10**9
    assert fields["gas"] == tx["gas"] == 21_000
    assert fields["value"] == tx["value"] and isinstance(tx["value"], int)
    assert to_checksum_address(fields["to"]) == tx["to"]
    assert bytes(fields["data"]) == b"" and tx["data"] == "0x"


def check_bitcoin(entry: dict) -> None:
    from embit import ec, script
    from embit.networks import NETWORKS
    from embit.psbt import PSBT
    from embit.transaction import Transaction

    regtest = NETWORKS["regtest"]
    public_key = ec.PublicKey.parse(bytes.fromhex(entry["publicKey"]))
    ours = script.p2wpkh(public_key)
    assert entry["network"] == "regtest" and ours.address(regtest) == entry["address"]

    unsigned = PSBT.from_string(entry["psbt"])
    assert all(inp.witness_utxo is not None and inp.witness_utxo.script_pubkey == ours for inp in unsigned.inputs)
    # Each input carries its previous transaction (the signer needs it: BIP-143's fee attack), whose output is the
    # witness UTXO.
    for inp, txin in zip(unsigned.inputs, unsigned.tx.vin):
        assert inp.non_witness_utxo is not None and inp.non_witness_utxo.txid() == txin.txid
        spent = inp.non_witness_utxo.vout[txin.vout]
        assert spent.value == inp.witness_utxo.value and spent.script_pubkey == ours
    assert all(not inp.partial_sigs for inp in unsigned.inputs)
    addresses = [out.script_pubkey.address(regtest) for out in unsigned.tx.vout]
    assert entry["recipient"] in addresses and entry["address"] in addresses, "recipient and change"

    signed = PSBT.from_string(entry["signedPsbt"])
    assert signed.tx.txid() == unsigned.tx.txid()
    amounts = []
    for index, inp in enumerate(signed.inputs):
        assert list(inp.partial_sigs) == [public_key]
        signature = inp.partial_sigs[public_key]
        assert signature[-1] == 0x01, "SIGHASH_ALL"
        assert public_key.verify(ec.Signature.parse(signature[:-1]), signed.sighash(index))
        amounts.append(inp.witness_utxo.value)
    assert sum(amounts) > sum(out.value for out in signed.tx.vout), "a fee"

    raw = bytes.fromhex(entry["tx"])
    tx = Transaction.parse(raw)
    assert tx.serialize() == raw and tx.is_segwit and tx.txid() == unsigned.tx.txid()
    assert [out.script_pubkey.address(regtest) for out in tx.vout] == addresses
    for index, (inp, amount) in enumerate(zip(tx.vin, amounts)):
        signature, key_bytes = inp.witness.items
        assert key_bytes == public_key.sec()
        digest = tx.sighash_segwit(index, script.p2pkh(public_key), amount)
        assert public_key.verify(ec.Signature.parse(signature[:-1]), digest)


def check_solana(entry: dict) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from solders.message import Message
    from solders.pubkey import Pubkey
    from solders.transaction import Transaction

    key = bytes.fromhex(entry["publicKey"])
    assert len(key) == 32 and str(Pubkey(key)) == entry["address"]
    message_bytes = base64.b64decode(entry["message"], validate=True)
    message = Message.from_bytes(message_bytes)
    assert message.account_keys[0] == Pubkey(key) and message.header.num_required_signatures == 1
    assert len(message.instructions) == 1
    wire = base64.b64decode(entry["transaction"], validate=True)
    tx = Transaction.from_bytes(wire)
    assert bytes(tx.message) == message_bytes and len(tx.signatures) == 1
    Ed25519PublicKey.from_public_bytes(key).verify(bytes(tx.signatures[0]), message_bytes)
    tx.verify()


def test_demo_chains_artifacts_verify_with_independent_libraries():
    entries = run_demo()
    shape = sorted((e["chain"], e["mode"], e.get("path", "")) for e in entries)
    assert shape == sorted([(chain, mode, path) for mode in ("duo", "trio") for chain, path in
                            [("ethereum", "m/44/60/0/0/0"), ("ethereum", "m"), ("bitcoin", "m/84/1/0/0/0"),
                             ("solana", "")]])
    checks = {"ethereum": check_ethereum, "bitcoin": check_bitcoin, "solana": check_solana}
    for entry in entries:
        checks[entry["chain"]](entry)
    # One ECDSA and one EdDSA key per mode: the two Ethereum paths give different keys of the same root.
    for mode in ("duo", "trio"):
        ethereum = [e for e in entries if e["chain"] == "ethereum" and e["mode"] == mode]
        assert len({e["address"] for e in ethereum}) == 2
    # Fresh random data: nothing repeats between the modes.
    assert len({e["personalSign"]["message"] for e in entries if e["chain"] == "ethereum"}) == 4
    assert len({e["transaction"]["raw"] for e in entries if e["chain"] == "ethereum"}) == 4
