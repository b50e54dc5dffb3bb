"""An independent prototype of protocol v3's SoftSpokenOT batch and its per-row consistency check
(docs/protocol/dkls23.md §8.1, §9.3), written from the spec text with hashlib and Python integers only:
the GGM trees and Bob's corrections, Alice's puncturing as a plain dictionary walk (not the Swift
constant-time one), the leaf PRG, û, the rows of T and Q, the GF(2^128) row hash, x̃, t̃ and Alice's
check. It reproduces the Swift known answer of `SoftSpokenOTTests.batchKnownAnswers` (dkls23.md
Appendix A) byte for byte, and checks the per-row check's behaviour on honest and cheating messages.
Needs no binary.
"""

import hashlib

from oracles import domain_frame, domain_prg

PROTOCOL = "SilentShard-DKLs23-v1"
K = 4                      # bits of Δ per block
BLOCKS = 256 // K          # 64 GGM trees
COLUMNS = 640              # m′ = ξ (512) + one 128-bit mask chunk
ROW = COLUMNS // 8         # 80 bytes
CHALLENGES = 4             # χ_0 … χ_3 ∈ GF(2^128)
F128 = (1 << 128) | 0x87   # X^128 + X^7 + X^2 + X + 1


def h(tag: str, *fields: bytes) -> bytes:
    return hashlib.sha256(domain_frame(PROTOCOL, tag, list(fields))).digest()


def h512(tag: str, *fields: bytes) -> bytes:
    return hashlib.sha512(domain_frame(PROTOCOL, tag, list(fields))).digest()


def prg(seed: bytes, label: bytes, count: int) -> bytes:
    return domain_prg(PROTOCOL, seed, label, count)


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def bit(vector: bytes, index: int) -> int:
    return (vector[index >> 3] >> (index & 7)) & 1


def gf_mul(a: int, b: int) -> int:
    product = 0
    while b:
        if b & 1:
            product ^= a
        b >>= 1
        a <<= 1
    for degree in range(product.bit_length() - 1, 127, -1):
        if product >> degree & 1:
            product ^= F128 << (degree - 128)
    return product


def child(seed: bytes, branch: int) -> bytes:
    return h("ote/ggm", seed, bytes([branch]))


def leaves_of(root: bytes) -> dict[int, bytes]:
    """All 2^k leaves: leaf x takes branch bit l of x at level l."""
    nodes = {0: root}
    for level in range(K):
        nodes = {p | (branch << level): child(seed, branch) for p, seed in nodes.items() for branch in (0, 1)}
    return nodes


def corrections(root: bytes, zero: list[bytes], one: list[bytes]) -> bytes:
    out = b""
    nodes = {0: root}
    for level in range(K):
        nodes = {p | (branch << level): child(seed, branch) for p, seed in nodes.items() for branch in (0, 1)}
        sums = [bytes(32), bytes(32)]
        for p, seed in nodes.items():
            sums[p >> level & 1] = xor(sums[p >> level & 1], seed)
        out += xor(sums[1], zero[level]) + xor(sums[0], one[level])
    return out


def punctured_leaves(choices: list[int], correction: bytes, keys: list[bytes]) -> dict[int, bytes]:
    """Alice's walk: keep every node off the path to Δ_i = Σ c_l·2^l; recover the sibling from the correction."""
    known: dict[int, bytes] = {}
    path = 0
    for level in range(K):
        known = {p | (branch << level): child(seed, branch) for p, seed in known.items() for branch in (0, 1)}
        c = choices[level]
        e = correction[64 * level + 32 * c: 64 * level + 32 * c + 32]
        wanted = xor(e, keys[level])                      # L^{1−c}_level
        sibling = path | ((1 - c) << level)
        for p, seed in known.items():
            if p >> level & 1 == 1 - c:
                wanted = xor(wanted, seed)
        known[sibling] = wanted
        path |= c << level
    assert len(known) == 2 ** K - 1 and path not in known
    return known


def pprf_proof(roots: list[bytes]) -> bytes:
    """s̃_i = ⊕_x g_{i,x} per tree, then t̃ = H("ote/pprf-check"; g_{0,0} ‖ … ‖ g_{63,15}), g = H("ote/pprf-leaf"; leaf)."""
    s_tilde, everything = b"", b""
    for root in roots:
        leaves = leaves_of(root)
        g = [h("ote/pprf-leaf", leaves[x]) for x in range(2 ** K)]
        total = bytes(32)
        for value in g:
            total = xor(total, value)
        s_tilde += total
        everything += b"".join(g)
    return s_tilde + h("ote/pprf-check", everything)


def pprf_verify(delta: bytes, leaves: list[dict[int, bytes]], proof: bytes) -> bool:
    """Alice: the missing g_{i,Δ_i} = s̃_i ⊕ the 15 she can compute; then t̃ over all trees."""
    everything = b""
    for i in range(BLOCKS):
        d_i = sum(bit(delta, K * i + level) << level for level in range(K))
        g = {x: h("ote/pprf-leaf", seed) for x, seed in leaves[i].items()}
        missing = proof[32 * i: 32 * i + 32]
        for value in g.values():
            missing = xor(missing, value)
        g[d_i] = missing
        everything += b"".join(g[x] for x in range(2 ** K))
    return h("ote/pprf-check", everything) == proof[32 * BLOCKS:]


def row_hash(row: bytes, chi: list[int]) -> int:
    acc = int.from_bytes(row[64:80], "little")            # the mask chunk, coefficient 1
    for c in range(CHALLENGES):
        acc ^= gf_mul(chi[c], int.from_bytes(row[16 * c: 16 * c + 16], "little"))
    return acc


def challenges(prg_id: bytes, u_hat: bytes) -> list[int]:
    digest = h512("ote/chi-row", prg_id, u_hat)
    return [int.from_bytes(digest[16 * c: 16 * c + 16], "little") for c in range(CHALLENGES)]


def bob_message(roots: list[bytes], prg_id: bytes, x: bytes) -> tuple[bytes, list[bytes]]:
    u_hat, rows = b"", []
    for i in range(BLOCKS):
        r = {leaf: prg(seed, prg_id, ROW) for leaf, seed in leaves_of(roots[i]).items()}
        u = bytes(ROW)
        for value in r.values():
            u = xor(u, value)
        u_hat += xor(u, x)
        for level in range(K):                            # v_i row l = ⊕_{x: x_l = 1} r_{i,x}
            row = bytes(ROW)
            for leaf, value in r.items():
                if leaf >> level & 1:
                    row = xor(row, value)
            rows.append(row)
    chi = challenges(prg_id, u_hat)
    message = u_hat + row_hash(x, chi).to_bytes(16, "little")
    for row in rows:
        message += row_hash(row, chi).to_bytes(16, "little")
    return message, rows


def alice_check(delta: bytes, leaves: list[dict[int, bytes]], prg_id: bytes, message: bytes) -> tuple[bool, list[bytes]]:
    u_hat = message[: BLOCKS * ROW]
    chi = challenges(prg_id, u_hat)
    x_tilde = int.from_bytes(message[BLOCKS * ROW: BLOCKS * ROW + 16], "little")
    rows, ok = [], True
    for i in range(BLOCKS):
        d_i = sum(bit(delta, K * i + level) << level for level in range(K))
        for level in range(K):
            # w_{i,l} = ⊕_{x ≠ Δ_i, x_l ≠ d} r_{i,x} ⊕ d·û_i
            d = bit(delta, K * i + level)
            row = u_hat[ROW * i: ROW * (i + 1)] if d else bytes(ROW)
            for leaf, seed in leaves[i].items():
                assert leaf != d_i
                if leaf >> level & 1 != d:
                    row = xor(row, prg(seed, prg_id, ROW))
            rows.append(row)
    for r, row in enumerate(rows):
        start = BLOCKS * ROW + 16 + 16 * r
        t_tilde = int.from_bytes(message[start: start + 16], "little")
        if row_hash(row, chi) != t_tilde ^ (x_tilde if bit(delta, r) else 0):
            ok = False
    return ok, rows


def kat(label: str, *fields: bytes) -> bytes:
    return h("kat", label.encode() + b"".join(fields))


def test_gf128_and_challenges_match_the_swift_known_answers():
    assert gf_mul(1 << 127, 2) == 0x87
    assert gf_mul(3, 5) == 15
    # DKLsPrimitiveTests.gadgetChallengesAndOutputs: χ for prg_id = 0^32, û = 0^5120.
    chi = challenges(bytes(32), bytes(5120))
    assert chi[0].to_bytes(16, "little").hex() == "831d45797b511f65995af345c67503bc"
    assert gf_mul(chi[0], chi[1]).to_bytes(16, "little").hex() == "80b9b75307b76e87d2f69f8cc836c229"


def test_softspoken_batch_known_answer_and_per_row_check():
    roots = [kat("ss-root", bytes([i])) for i in range(BLOCKS)]
    zero = [kat("ss-key", b.to_bytes(4, "big"), b"\x00") for b in range(256)]
    one = [kat("ss-key", b.to_bytes(4, "big"), b"\x01") for b in range(256)]
    delta = kat("ss-delta")
    all_corrections = b"".join(corrections(roots[i], zero[K * i: K * i + K], one[K * i: K * i + K]) for i in range(BLOCKS))
    assert hashlib.sha256(all_corrections).hexdigest() == "db50dd4f60886a668ccf112aff052c34f8690045c9b59aed6643f09112b248f3"
    leaves = []
    for i in range(BLOCKS):
        choices = [bit(delta, K * i + level) for level in range(K)]
        keys = [one[K * i + level] if choices[level] else zero[K * i + level] for level in range(K)]
        leaves.append(punctured_leaves(choices, all_corrections[256 * i: 256 * (i + 1)], keys))
        bob_leaves = leaves_of(roots[i])
        assert all(bob_leaves[x] == seed for x, seed in leaves[i].items())
    proof = pprf_proof(roots)
    assert len(all_corrections) + len(proof) == 18_464
    assert proof[:32].hex() == SWIFT_PPRF_S0 and proof[-32:].hex() == SWIFT_PPRF_T
    assert pprf_verify(delta, leaves, proof)
    for tampered_at in (0, 32 * 17 + 5, len(proof) - 1):
        bad = bytearray(proof)
        bad[tampered_at] ^= 1
        assert not pprf_verify(delta, leaves, bytes(bad))
    prg_id = bytes(32)
    x = bytes([0xA5]) * ROW
    message, t_rows = bob_message(roots, prg_id, x)
    assert len(message) == 9_232
    assert hashlib.sha256(message).hexdigest() == SWIFT_MESSAGE_SHA256
    ok, q_rows = alice_check(delta, leaves, prg_id, message)
    assert ok
    for r in range(256):                                  # Q row r = T row r ⊕ Δ_r·x
        assert q_rows[r] == (xor(t_rows[r], x) if bit(delta, r) else t_rows[r])
    # A flipped bit of x̃, or of û_5 (so block 5's effective choice deviates), fails the check.
    tampered = bytearray(message)
    tampered[BLOCKS * ROW] ^= 1
    assert not alice_check(delta, leaves, prg_id, bytes(tampered))[0]
    tampered = bytearray(message)
    tampered[5 * ROW] ^= 1
    assert not alice_check(delta, leaves, prg_id, bytes(tampered))[0]


# The PPRF consistency proof's s̃_0 and t̃ (Swift: SoftSpokenOTTests.batchKnownAnswers, dkls23.md Appendix A).
SWIFT_PPRF_S0 = "b12892e6a066eeb7878793d7a055791034608fa4d4b5ccfa4f0abd0c881b8d34"
SWIFT_PPRF_T = "1f6a1f82f4fbaa579619d8ffc3902c3fd72b9fac3e5b6f13b2e636b4dab3b71a"
# SHA-256 of Bob's 9,232-byte message in dkls23.md Appendix A (Swift: SoftSpokenOTTests.batchKnownAnswers).
SWIFT_MESSAGE_SHA256 = "bc3432cceb985765f85a746083b99c5a589a25a2b74662033d00bb295a06d1f6"
