import Foundation
import CSecp256k1
import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// DKLs23 benchmarks: every party in this process on one thread (in-memory transport), so a figure is
/// the CPU time of all parties together. Baseline: single-party libsecp256k1 ECDSA signing.
enum DKLsBenchmarks {
    static func run(harness: Harness) throws {
        var harness = harness
        harness.samples = 21
        var results: [Harness.Result] = []
        var rng = SecureRandom()
        var bytes: [String: Int] = [:]

        for (n, t) in [(2, 2), (3, 2)] {
            results.append(harness.measure("DKG \(t)-of-\(n) (all parties)") {
                blackHole(try? keygen(n: n, t: t, using: &rng))
            })
        }
        let duo = try keygen(n: 2, t: 2, using: &rng)
        let hash = SHA256.hash(Array("benchmark".utf8))
        // The per-OT loops run in ChunkedParallelism.width chunks; the serial run is the baseline.
        let width = ChunkedParallelism.onlineProcessors
        ChunkedParallelism.width = 1
        results.append(harness.measure("sign 2 parties, serial OT loops (width 1)") {
            blackHole(try? sign(duo, hash: hash, using: &rng))
        })
        ChunkedParallelism.width = width
        results.append(harness.measure("sign 2 parties (presign + finish + combine)") {
            blackHole(try? sign(duo, hash: hash, using: &rng))
        })
        results.append(harness.measure("presign 2 parties (rounds 1–2)") {
            blackHole(try? presign(duo, using: &rng))
        })
        let presignatures = try (0..<harness.samples).map { _ in try presign(duo, using: &rng) }
        results.append(harness.measureEach("finish + combine 2 parties", runs: presignatures.count) { k in
            blackHole(try? finish(presignatures[k], duo, hash: hash))
        })
        let key = Secp256k1.Scalar.random(using: &rng)
        results.append(harness.measure("baseline: local ECDSA sign (libsecp256k1)") {
            blackHole(try? Secp256k1.ECDSA.sign(hash: hash, privateKey: key))
        })
        printTable("DKLs23 (secp256k1), all parties on one core", results, baselines: [
            "sign 2 parties (presign + finish + combine)": "sign 2 parties, serial OT loops (width 1)",
        ])
        print("(OT loops in \(width) chunks on \(ProcessInfo.processInfo.activeProcessorCount) cores)")

        // Bytes sent per party (payloads; a broadcast counted once per recipient).
        for (n, t) in [(2, 2), (3, 2)] {
            let traffic = try keygenTraffic(n: n, t: t, using: &rng)
            bytes["DKG \(t)-of-\(n)"] = traffic
        }
        bytes["sign, 2 signers"] = try signTraffic(duo, hash: hash, using: &rng)
        print("\n| bytes sent per party | payload bytes |\n|---|---:|")
        for (name, count) in bytes.sorted(by: { $0.key < $1.key }) { print("| \(name) | \(count) |") }
    }

    // MARK: In-process runs

    static func keygen<R: RandomNumberGenerator>(n: Int, t: Int, using rng: inout R) throws -> [DKLsKeyshare] {
        try DKLsInProcess.keygen(partyCount: n, threshold: t, using: &rng)
    }

    static func presign<R: RandomNumberGenerator>(_ keyshares: [DKLsKeyshare], using rng: inout R) throws -> [DKLsPresignature] {
        try DKLsInProcess.presign(keyshares, using: &rng)
    }

    static func finish(_ presignatures: [DKLsPresignature], _ keyshares: [DKLsKeyshare], hash: [UInt8]) throws -> Secp256k1.ECDSASignature {
        try DKLsInProcess.finish(presignatures, keyshares: keyshares, messageHash: hash)
    }

    static func sign<R: RandomNumberGenerator>(_ keyshares: [DKLsKeyshare], hash: [UInt8], using rng: inout R) throws -> Secp256k1.ECDSASignature {
        try DKLsInProcess.sign(keyshares, messageHash: hash, using: &rng)
    }

    /// Payload bytes party 0 sends (a broadcast counted once per recipient).
    static func bytesSentByFirstParty(recipients: Int, _ run: (DKLsInProcess.Observe) throws -> Void) rethrows -> Int {
        var sent = 0
        try run { message in
            if message.from == 0 { sent += message.payload.count * (message.isBroadcast ? recipients : 1) }
        }
        return sent
    }

    static func keygenTraffic<R: RandomNumberGenerator>(n: Int, t: Int, using rng: inout R) throws -> Int {
        try bytesSentByFirstParty(recipients: n - 1) { observe in
            _ = try DKLsInProcess.keygen(partyCount: n, threshold: t, using: &rng, observe: observe)
        }
    }

    static func signTraffic<R: RandomNumberGenerator>(_ keyshares: [DKLsKeyshare], hash: [UInt8], using rng: inout R) throws -> Int {
        try bytesSentByFirstParty(recipients: keyshares.count - 1) { observe in
            _ = try DKLsInProcess.sign(keyshares, messageHash: hash, using: &rng, observe: observe)
        }
    }
}
