"""Issue 21: the chain helpers' artifacts, checked by the chains' own libraries (eth-keys, eth-hash, eth-account,
bip-utils, solders, embit)."""
import json
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


def address_hex(address) -> str:
    """eth-account's decoded address (bytes or text) as lowercase 0x-hex."""
    return address.lower() if isinstance(address, str) else "0x" + bytes(address).hex()


def storage_key_hex(key) -> str:
    """eth-account's decoded storage key (int, bytes or hex text) as 64 hex digits."""
    if isinstance(key, int):
        return key.to_bytes(32, "big").hex()
    if isinstance(key, str):
        return key.removeprefix("0x").rjust(64, "0")
    return bytes(key).hex()


def random_address() -> str:
    return "0x" + secrets.token_bytes(20).hex()


def random_transaction(kind: int) -> dict:
    tx = {"type": kind, "chainId": secrets.choice([1, 5, 10, 137, 42161, 11155111]), "nonce": secrets.randbelow(1000),
          "gas": 21000 + secrets.randbelow(200000), "to": secrets.choice([random_address(), ""]),
          "value": str(secrets.randbelow(10**24)), "data": secrets.token_bytes(secrets.randbelow(80)).hex()}
    if kind == 2:
        tip = secrets.randbelow(5 * 10**9)
        tx.update(maxPriorityFeePerGas=str(tip), maxFeePerGas=str(tip + secrets.randbelow(100 * 10**9)))
    else:
        tx["gasPrice"] = str(secrets.randbelow(100 * 10**9))
    if kind >= 1:
        tx["accessList"] = [{"address": random_address(),
                             "storageKeys": [secrets.token_bytes(32).hex() for _ in range(secrets.randbelow(3))]}
                            for _ in range(secrets.randbelow(3))]
    return tx


def test_transactions_recover_to_the_sender_with_eth_account(interop):
    """Legacy (EIP-155), EIP-2930 and EIP-1559 transactions with random fields, signed by a threshold key at
    a random soft path: eth-account recovers the sender (= the SDK's address) and decodes the fields back."""
    from eth_account import Account
    from eth_account.typed_transactions import TypedTransaction
    from hexbytes import HexBytes
    import rlp

    transactions = [random_transaction(kind) for kind in (0, 1, 2) for _ in range(3)]
    [result] = interop.call("eth-transactions", [{"seed": secrets.randbelow(2**31), "path": random_soft_path(),
                                                  "transactions": transactions}])
    assert "error" not in result, result
    for tx, raw_hex in zip(transactions, result["raws"]):
        raw = bytes.fromhex(raw_hex)
        assert Account.recover_transaction(raw) == result["address"]
        if tx["type"] == 0:
            nonce, gas_price, gas, to, value, data, v, _r, _s = rlp.decode(raw)
            assert int.from_bytes(nonce, "big") == tx["nonce"] and int.from_bytes(gas_price, "big") == int(tx["gasPrice"])
            assert (int.from_bytes(v, "big") - 35) // 2 == tx["chainId"]
            decoded = {"gas": int.from_bytes(gas, "big"), "to": "0x" + to.hex() if to else "",
                       "value": int.from_bytes(value, "big"), "data": data.hex()}
        else:
            fields = TypedTransaction.from_bytes(HexBytes(raw)).as_dict()
            assert fields["chainId"] == tx["chainId"] and fields["nonce"] == tx["nonce"]
            if tx["type"] == 2:
                assert fields["maxFeePerGas"] == int(tx["maxFeePerGas"])
                assert fields["maxPriorityFeePerGas"] == int(tx["maxPriorityFeePerGas"])
            else:
                assert fields["gasPrice"] == int(tx["gasPrice"])
            assert [(address_hex(e["address"]), [storage_key_hex(k) for k in e["storageKeys"]])
                    for e in fields["accessList"]] == [(e["address"], e["storageKeys"]) for e in tx["accessList"]]
            to = fields.get("to") or b""
            decoded = {"gas": fields["gas"], "to": ("0x" + bytes(to).hex()) if to else "",
                       "value": fields["value"], "data": bytes(fields["data"]).hex()}
        assert decoded == {"gas": tx["gas"], "to": tx["to"], "value": int(tx["value"]), "data": tx["data"]}


def test_bitcoin_addresses_match_bip_utils(interop):
    """P2WPKH (bech32) and P2PKH (Base58Check) addresses of random keys on every network are bip-utils'."""
    import coincurve
    from bip_utils import P2PKHAddrEncoder, P2WPKHAddrEncoder

    networks = {"mainnet": ("bc", b"\x00"), "testnet": ("tb", b"\x6f"), "regtest": ("bcrt", b"\x6f")}
    keys = [coincurve.PrivateKey().public_key.format(compressed=True) for _ in range(8)]
    cases = [{"publicKey": key.hex(), "network": network} for key in keys for network in networks]
    results = interop.call("btc-addresses", cases)
    for case, result in zip(cases, results):
        hrp, version = networks[case["network"]]
        key = bytes.fromhex(case["publicKey"])
        assert result["p2wpkh"] == P2WPKHAddrEncoder.EncodeKey(key, hrp=hrp, wit_ver=0), case
        assert result["p2pkh"] == P2PKHAddrEncoder.EncodeKey(key, net_ver=version), case


@pytest.mark.parametrize("version", ["legacy", "v0"])
def test_solana_transactions_verify_with_solders(interop, version):
    """solders builds transfer messages paid by a threshold EdDSA key's soft child (legacy and v0); the
    SDK signs them; solders parses the wire transactions, the payer is the SDK's base58 address, and the
    signature verifies over the message bytes (cryptography's Ed25519)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from solders.hash import Hash
    from solders.message import Message, MessageV0, to_bytes_versioned
    from solders.pubkey import Pubkey
    from solders.system_program import TransferParams, transfer
    from solders.transaction import Transaction, VersionedTransaction

    seed, path = secrets.token_bytes(32).hex(), random_soft_path()
    [key] = interop.call("sol-sign", [{"seed": seed, "path": path}])
    assert "error" not in key, key
    payer = Pubkey.from_string(key["address"])
    assert bytes(payer) == bytes.fromhex(key["publicKey"])
    messages = []
    for _ in range(3):
        ix = transfer(TransferParams(from_pubkey=payer, to_pubkey=Pubkey(secrets.token_bytes(32)),
                                     lamports=secrets.randbelow(10**12) + 1))
        blockhash = Hash(secrets.token_bytes(32))
        message = (Message.new_with_blockhash([ix], payer, blockhash) if version == "legacy"
                   else MessageV0.try_compile(payer, [ix], [], blockhash))
        messages.append(bytes(message) if version == "legacy" else to_bytes_versioned(message))
    [result] = interop.call("sol-sign", [{"seed": seed, "path": path, "messages": [m.hex() for m in messages]}])
    assert "error" not in result, result
    verifier = Ed25519PublicKey.from_public_bytes(bytes(payer))
    for message, wire_hex in zip(messages, result["transactions"]):
        wire = bytes.fromhex(wire_hex)
        tx = VersionedTransaction.from_bytes(wire)
        assert tx.message.account_keys[0] == payer
        assert len(tx.signatures) == 1
        verifier.verify(bytes(tx.signatures[0]), message)
        assert wire.endswith(message)
        if version == "legacy":
            legacy = Transaction.from_bytes(wire)
            legacy.verify()


DOMAIN_MEMBERS = [("name", "string"), ("version", "string"), ("chainId", "uint256"), ("verifyingContract", "address"),
                  ("salt", "bytes32")]


def random_text() -> str:
    """Printable ASCII, quotes and backslashes, accents, CJK and an emoji (a surrogate pair in JSON)."""
    alphabet = 'abcXYZ 019"\\/\n\t{}é漢😀'
    return "".join(secrets.choice(alphabet) for _ in range(secrets.randbelow(24)))


def random_address_text() -> str:
    from eth_utils import to_checksum_address

    address = random_address()
    return to_checksum_address(address) if secrets.randbelow(2) else address


def random_uint(bits: int):
    """A value below 2**bits, as a JSON number, a decimal string or a 0x-hex string."""
    value = secrets.randbelow(2**bits) >> secrets.randbelow(bits)
    return secrets.choice([value, str(value), hex(value)])


def random_negative(bits: int):
    """A negative value in [-2**(bits-1), -1] (the bound itself sometimes), as a JSON number or a string."""
    value = -(2 ** (bits - 1)) if secrets.randbelow(4) == 0 else -1 - (secrets.randbelow(2 ** (bits - 1)) >> secrets.randbelow(bits))
    return secrets.choice([value, str(value)])


def random_name(used: set) -> str:
    while True:
        name = secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") + "".join(secrets.choice("abcdefxyz_0123") for _ in range(secrets.randbelow(8)))
        if name not in used:
            used.add(name)
            return name


def shuffled(items: list) -> list:
    items = list(items)
    for index in range(len(items) - 1, 0, -1):
        other = secrets.randbelow(index + 1)
        items[index], items[other] = items[other], items[index]
    return items


def random_typed_data() -> dict:
    """An eth_signTypedData_v4 document with random names, member order and values: a struct nested two deep,
    an array of structs, a dynamic uint256[], a nested int16[2][], bytes, string, a negative intN, bytes32,
    bytesN, uintN, bool and address; the domain a random subset of the EIP's members in the EIP's order."""
    used = {"EIP712Domain"}
    primary, inner, leaf, item = (random_name(used) for _ in range(4))
    int_bits, uint_bits, fixed = 8 * (1 + secrets.randbelow(32)), 8 * (1 + secrets.randbelow(32)), 1 + secrets.randbelow(32)
    types = {
        leaf: shuffled([("tag", "bytes32"), ("delta", "int64"), ("when", f"uint{uint_bits}")]),
        inner: shuffled([("label", "string"), ("wallet", "address"), ("leaf", leaf)]),
        item: shuffled([("amount", "uint256"), ("data", "bytes"), ("flag", "bool")]),
        primary: shuffled([("owner", inner), ("items", f"{item}[]"), ("amounts", "uint256[]"), ("blob", "bytes"),
                           ("note", "string"), ("delta", f"int{int_bits}"), ("digest", "bytes32"), ("recipient", "address"),
                           ("grid", "int16[2][]"), ("short", f"bytes{fixed}"), ("count", f"uint{uint_bits}"), ("ok", "bool")]),
    }
    values = {
        "bytes32": lambda: "0x" + secrets.token_bytes(32).hex(), "int64": lambda: random_negative(64),
        f"uint{uint_bits}": lambda: random_uint(uint_bits), "string": random_text, "address": random_address_text,
        "uint256": lambda: random_uint(256), "bytes": lambda: "0x" + secrets.token_bytes(secrets.randbelow(70)).hex(),
        "bool": lambda: bool(secrets.randbelow(2)), f"int{int_bits}": lambda: random_negative(int_bits),
        f"bytes{fixed}": lambda: "0x" + secrets.token_bytes(fixed).hex(),
        f"{item}[]": lambda: [value_of(item) for _ in range(secrets.randbelow(4))],
        "uint256[]": lambda: [random_uint(256) for _ in range(secrets.randbelow(5))],
        "int16[2][]": lambda: [[secrets.choice([random_negative(16), random_uint(15)]) for _ in range(2)]
                               for _ in range(secrets.randbelow(4))],
    }

    def value_of(type_name: str):
        if type_name in types:
            return {name: value_of(member) for name, member in shuffled(types[type_name])}
        return values[type_name]()

    members = [member for member in DOMAIN_MEMBERS if secrets.randbelow(3)]
    domain_values = {"name": random_text(), "version": str(secrets.randbelow(10)), "chainId": secrets.randbelow(2**64) + 1,
                     "verifyingContract": random_address_text(), "salt": "0x" + secrets.token_bytes(32).hex()}
    return {
        "types": {"EIP712Domain": [{"name": n, "type": t} for n, t in members]}
        | {name: [{"name": n, "type": t} for n, t in fields] for name, fields in shuffled(list(types.items()))},
        "primaryType": primary,
        "domain": {name: domain_values[name] for name, _ in members},
        "message": value_of(primary),
    }


def test_typed_data_hashes_and_signatures_match_eth_account(interop):
    """Random EIP-712 documents (fresh each run), signed by a threshold key at a random soft path: the SDK's
    domain separator, message hash and signing hash are eth-account's (encode_typed_data(full_message=…));
    eth-account recovers each signature to the SDK's address; the JSON the SDK writes back hashes the same
    with eth-account. A document eth-account refuses (uint8 = 256) the SDK refuses too."""
    from eth_account import Account
    from eth_account.messages import encode_typed_data

    documents = [random_typed_data() for _ in range(6)]
    texts = [json.dumps(document, ensure_ascii=bool(secrets.randbelow(2))) for document in documents]
    [result] = interop.call("eth-typed-data", [{"seed": secrets.randbelow(2**31), "path": random_soft_path(),
                                                "documents": texts}])
    assert "error" not in result, result
    assert keys.PublicKey.from_compressed_bytes(bytes.fromhex(result["publicKey"])).to_checksum_address() == result["address"]
    for text, sdk in zip(texts, result["documents"]):
        signable = encode_typed_data(full_message=json.loads(text))
        assert sdk["domainSeparator"] == bytes(signable.header).hex(), text
        assert sdk["messageHash"] == bytes(signable.body).hex(), text
        assert sdk["signingHash"] == keccak(b"\x19\x01" + signable.header + signable.body).hex(), text
        signature = bytes.fromhex(sdk["signature"])
        assert signature[64] in (27, 28) and int.from_bytes(signature[32:64], "big") <= SECPK1_N // 2
        assert Account.recover_message(signable, signature=signature) == result["address"]
        written = encode_typed_data(full_message=json.loads(sdk["json"]))
        assert (written.header, written.body) == (signable.header, signable.body)

    bad = random_typed_data()
    bad["types"][bad["primaryType"]].append({"name": "tiny", "type": "uint8"})
    bad["message"]["tiny"] = 256
    with pytest.raises(Exception):
        encode_typed_data(full_message=bad)
    [refused] = interop.call("eth-typed-data", [{"seed": 1, "documents": [json.dumps(bad)]}])
    assert "error" in refused and "out of range for uint8" in json.dumps(refused), refused


SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def der_s(der: bytes) -> int:
    """s of a DER signature (parsed here, independently of the SDK and of embit)."""
    assert der[0] == 0x30 and der[1] == len(der) - 2 and der[2] == 0x02
    r_len = der[3]
    assert der[4 + r_len] == 0x02
    return int.from_bytes(der[6 + r_len:6 + r_len + der[5 + r_len]], "big")


def random_output_script():
    """A scriptPubKey to a random key: P2WPKH, P2PKH, P2SH-P2WPKH or P2TR (embit)."""
    from embit import ec, script

    key = ec.PrivateKey(secrets.token_bytes(32)).get_public_key()
    return secrets.choice([lambda: script.p2wpkh(key), lambda: script.p2pkh(key),
                           lambda: script.p2sh(script.p2wpkh(key)), lambda: script.p2tr(key)])()


def test_psbt_p2wpkh_inputs_signed_by_a_threshold_key_verify_with_embit(interop):
    """embit builds a regtest PSBT (1–3 P2WPKH inputs of a threshold key's random soft child, each spending a
    random output of a random previous transaction that the PSBT carries as its non-witness UTXO next to the
    witness UTXO, random amounts and sequences, 1–2 outputs to random addresses, an unknown record on an
    input); the SDK signs,
    finalizes and extracts. embit checks each partial signature (DER ‖ SIGHASH_ALL, low S) against its own
    BIP-143 hash and the key, that the finalizer left [signature, key] as the witness with the UTXO and the
    unknown record, and that the extracted transaction parses, is the unsigned one (same txid) with
    well-formed witnesses whose signatures verify over the hash embit computes from that transaction."""
    from embit import ec, script
    from embit.networks import NETWORKS
    from embit.psbt import PSBT
    from embit.transaction import Transaction, TransactionInput, TransactionOutput

    seed, path = secrets.randbelow(2**31), random_soft_path()
    [key] = interop.call("btc-psbt", [{"seed": seed, "path": path}])
    assert "error" not in key, key
    public_key = ec.PublicKey.parse(bytes.fromhex(key["publicKey"]))
    ours = script.p2wpkh(public_key)
    assert ours.address(NETWORKS["regtest"]) == key["address"]

    amounts = [10_000 + secrets.randbelow(10**9) for _ in range(1 + secrets.randbelow(3))]
    previous = [previous_transaction(TransactionOutput(amount, ours)) for amount in amounts]
    vin = [TransactionInput(tx.txid(), index,
                            sequence=secrets.choice([0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, secrets.randbelow(2**32)]))
           for tx, index in previous]
    budget = sum(amounts) - 1_000
    values = [budget // 2, budget - budget // 2] if secrets.randbelow(2) else [budget]
    vout = [TransactionOutput(value, random_output_script()) for value in values]
    unsigned = Transaction(version=secrets.choice([1, 2]), vin=vin, vout=vout, locktime=secrets.randbelow(500_000))
    psbt = PSBT(unsigned)
    for inp, amount, (tx, _) in zip(psbt.inputs, amounts, previous):
        inp.non_witness_utxo = tx
        inp.witness_utxo = TransactionOutput(amount, ours)
    psbt.inputs[0].unknown = {b"\xf0\x01": b"kept"}  # a new dict: embit's scopes share their default one

    [result] = interop.call("btc-psbt", [{"seed": seed, "path": path, "psbt": psbt.to_string()}])
    assert "error" not in result, result
    assert result["signedInputs"] == list(range(len(amounts)))

    signed = PSBT.from_string(result["signed"])
    signatures = []
    for index, inp in enumerate(signed.inputs):
        assert list(inp.partial_sigs) == [public_key]
        signature = inp.partial_sigs[public_key]
        assert signature[-1] == 0x01, "SIGHASH_ALL"
        assert der_s(signature[:-1]) <= SECP256K1_N // 2, "low S"
        assert public_key.verify(ec.Signature.parse(signature[:-1]), psbt.sighash(index))
        signatures.append(signature)

    finalized = PSBT.from_string(result["finalized"])
    for inp, signature, amount in zip(finalized.inputs, signatures, amounts):
        assert inp.final_scriptwitness.items == [signature, public_key.sec()]
        assert not inp.partial_sigs and inp.final_scriptsig is None
        assert inp.witness_utxo.value == amount and inp.witness_utxo.script_pubkey == ours
    assert finalized.inputs[0].unknown == {b"\xf0\x01": b"kept"}

    raw = bytes.fromhex(result["transaction"])
    tx = Transaction.parse(raw)
    assert tx.serialize() == raw and tx.is_segwit
    assert tx.txid() == unsigned.txid() and result["txid"] == tx.txid().hex()
    assert [o.value for o in tx.vout] == values
    for index, (inp, amount) in enumerate(zip(tx.vin, amounts)):
        assert inp.script_sig.data == b""
        signature, key_bytes = inp.witness.items
        assert key_bytes == public_key.sec() and len(signature) <= 73
        digest = tx.sighash_segwit(index, script.p2pkh(public_key), amount)
        assert public_key.verify(ec.Signature.parse(signature[:-1]), digest)


def previous_transaction(output):
    """A random transaction (embit) holding `output` at a random index among random others, and that index."""
    from embit.transaction import Transaction, TransactionInput, TransactionOutput

    index = secrets.randbelow(4)
    others = [TransactionOutput(1_000 + secrets.randbelow(10**6), random_output_script()) for _ in range(index + secrets.randbelow(2))]
    tx = Transaction(vin=[TransactionInput(secrets.token_bytes(32), secrets.randbelow(4))],
                     vout=others[:index] + [output] + others[index:])
    return tx, index


def test_psbt_without_previous_transactions_is_not_signed(interop):
    """Issue 32, finding 3 (BIP-143's fee attack, CVE-2020-14199): a P2WPKH input of the key with only its
    witness UTXO (the amount unchecked) is refused by the SDK's signer; with the previous transaction it is
    signed, and a witness UTXO that lies about that transaction's amount is refused."""
    from embit import ec, script
    from embit.psbt import PSBT
    from embit.transaction import Transaction, TransactionInput, TransactionOutput

    seed, path = secrets.randbelow(2**31), random_soft_path()
    [key] = interop.call("btc-psbt", [{"seed": seed, "path": path}])
    ours = script.p2wpkh(ec.PublicKey.parse(bytes.fromhex(key["publicKey"])))
    tx, index = previous_transaction(TransactionOutput(50_000, ours))
    unsigned = Transaction(vin=[TransactionInput(tx.txid(), index)], vout=[TransactionOutput(49_000, random_output_script())])
    cases = {"witness only": (None, 50_000), "lying witness UTXO": (tx, 5_000), "previous transaction": (tx, 50_000)}
    results = {}
    for name, (previous, amount) in cases.items():
        psbt = PSBT(unsigned)
        psbt.inputs[0].non_witness_utxo = previous
        psbt.inputs[0].witness_utxo = TransactionOutput(amount, ours)
        [results[name]] = interop.call("btc-psbt", [{"seed": seed, "path": path, "psbt": psbt.to_string()}])
    assert "error" in results["witness only"] and "no PSBT_IN_NON_WITNESS_UTXO" in json.dumps(results["witness only"])
    assert "error" in results["lying witness UTXO"] and "witness UTXO differs" in json.dumps(results["lying witness UTXO"])
    assert "error" not in results["previous transaction"] and results["previous transaction"]["signedInputs"] == [0]


def test_psbt_with_a_foreign_input_is_refused_when_extracting(interop):
    """An input of another key is not signed; the SDK then refuses to extract ("not finalized")."""
    from embit import ec, script
    from embit.psbt import PSBT
    from embit.transaction import Transaction, TransactionInput, TransactionOutput

    seed, path = secrets.randbelow(2**31), random_soft_path()
    [key] = interop.call("btc-psbt", [{"seed": seed, "path": path}])
    ours = script.p2wpkh(ec.PublicKey.parse(bytes.fromhex(key["publicKey"])))
    previous, index = previous_transaction(TransactionOutput(4_000, ours))
    unsigned = Transaction(vin=[TransactionInput(previous.txid(), index), TransactionInput(secrets.token_bytes(32), 0)],
                           vout=[TransactionOutput(5_000, random_output_script())])
    psbt = PSBT(unsigned)
    psbt.inputs[0].non_witness_utxo = previous
    psbt.inputs[0].witness_utxo = TransactionOutput(4_000, ours)
    psbt.inputs[1].witness_utxo = TransactionOutput(4_000, random_output_script())
    [result] = interop.call("btc-psbt", [{"seed": seed, "path": path, "psbt": psbt.to_string()}])
    assert "error" in result and "input 1 is not finalized" in json.dumps(result), result
