"""The CLI itself: malformed requests and cases come back as JSON errors, never as a crash."""

from __future__ import annotations

import json

import pytest

from oracles import error_name

ALL_OPERATIONS = [
    "secp256k1", "secp256k1-decode", "ecdsa-sign", "ecdsa-verify", "ed25519-sign", "ed25519-verify",
    "ed25519-scalar", "ed25519-decode", "x25519", "p256-sign", "p256-verify", "chacha20poly1305",
    "xchacha20poly1305", "sha256", "sha512", "hmac-sha256", "hmac-sha512", "aes-prg", "domain-hash",
]

MALFORMED_REQUESTS = [
    (b"", "badRequest"),
    (b"garbage", "badRequest"),
    (b"\xff\xfe\x00", "badRequest"),
    (b"[]", "badRequest"),
    (b'"op"', "badRequest"),
    (b"{}", "badRequest"),
    (b'{"op": "sha256"}', "badRequest"),
    (b'{"op": "sha256", "cases": {}}', "badRequest"),
    (b'{"op": 5, "cases": []}', "badRequest"),
    (b'{"op": "sha256", "cases": [1.5]}', "badRequest"),
    (b'{"op": "sha256", "cases": [' + b"[" * 5000 + b"]" * 5000 + b"]}", "badRequest"),
    (b'{"op": "no-such-op", "cases": []}', "unknownOperation"),
]


@pytest.mark.parametrize("payload, name", MALFORMED_REQUESTS, ids=[n for n, _ in enumerate(MALFORMED_REQUESTS)])
def test_malformed_requests_are_json_errors(interop, payload, name):
    status, response, stderr = interop.run_raw(payload)
    assert status == 1, response
    assert response["error"] == name and response["detail"], response
    assert "Fatal error" not in stderr


def test_empty_batch(interop):
    assert interop.call("secp256k1", []) == []


def test_malformed_cases_fail_alone(interop):
    good = {"a": "00" * 31 + "01", "b": "00" * 31 + "02"}
    cases = [
        good,
        "not an object",
        {"b": good["b"]},
        {**good, "a": 7},
        {**good, "a": "0g" * 32},
        {**good, "a": "abc"},
        {**good, "wide": ["00"]},
        {**good, "exponent": None},
        good,
    ]
    results = interop.call("secp256k1", cases)
    names = [error_name(r) for r in results]
    assert names == [None, "wrongType", "missingField", "wrongType", "invalidHex", "invalidHex", "wrongType", None, None]
    assert results[0] == results[-1]
    assert "power" not in results[7]


# Which junk cases (by index) an operation accepts: the empty hex string is valid data for hashing,
# and the decoders report a bad encoding inside the result ({"point": {"error": ...}}).
JUNK_ACCEPTED = {"sha256": [3, 8], "sha512": [3, 8], "ed25519-decode": [3, 8], "hmac-sha256": [8], "hmac-sha512": [8]}


def test_every_operation_survives_junk_cases(interop):
    junk = [None, True, 0, "", "zz", [], {}, {"data": 1}, {"mode": "other", "key": "", "nonce": "", "data": "",
            "encoding": "pem", "seed": "", "count": 1, "fields": [1], "protocol": "p", "tag": "t"}]
    for op in ALL_OPERATIONS:
        results = interop.call(op, junk)
        assert all(isinstance(r, dict) for r in results), op
        accepted = [i for i, r in enumerate(results) if error_name(r) is None]
        assert accepted == JUNK_ACCEPTED.get(op, []), (op, results)


def test_responses_are_single_line_sorted_json(interop):
    status, response, _ = interop.run_raw(json.dumps({"op": "sha256", "cases": ["00"]}).encode())
    assert status == 0 and list(response) == ["results"]
    assert list(response["results"][0]) == sorted(response["results"][0])
