import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// FROST(Ed25519, SHA-512) per-party costs, all parties in one process (no network).
enum FROSTBenchmarks {
    /// ZcashFoundation frost-ed25519's published figures for round 1, round 2 and aggregate (ms),
    /// as given in the issue (other hardware, other party counts: context only).
    static let zcashFoundation = (round1: 0.08, round2: 0.12, aggregate: 0.22)

    static func run(harness: Harness) throws {
        var rows: [(String, Double, String)] = []
        for (t, n) in [(UInt8(2), UInt8(2)), (2, 3)] {
            var rng = DeterministicRandom(seed: 7)
            let label = "\(t)-of-\(n)"
            let dkg = harness.measure("DKG \(label), all \(n) parties") {
                blackHole(try? FROST.LocalRun.keygen(threshold: t, parties: n, using: &rng))
            }
            rows.append(("DKG \(label): all \(n) parties in one process", dkg.nanosecondsPerOperation, "—"))
            rows.append(("DKG \(label): per party (÷ \(n))", dkg.nanosecondsPerOperation / Double(n), "—"))

            let shares = try FROST.LocalRun.keygen(threshold: t, parties: n, using: &rng)
            let message = [UInt8](repeating: 0x42, count: 32)
            let round1 = harness.measure("sign round 1 \(label)") {
                blackHole(FROST.Presignature(keyshare: shares[0], using: &rng))
            }
            // Round 2 needs a fresh presignature each time: a pool made before timing (refilled
            // inside the timed body only if the harness runs more iterations than expected).
            let peer = FROST.Presignature(keyshare: shares[1], using: &rng)
            var pool = (0..<6000).map { _ in FROST.Presignature(keyshare: shares[0], using: &rng) }
            let round2 = harness.measure("sign round 2 \(label)") {
                let presignature = pool.popLast() ?? FROST.Presignature(keyshare: shares[0], using: &rng)
                guard var s = try? FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: message,
                                                        presignature: presignature) else { return }
                try? s.receiveRound1(peer.round1Message, from: 1)
                blackHole(try? s.round2())
            }
            pool.removeAll()
            // Aggregation: party 0 after round 2, fed party 1's share (copies of one state).
            let p0 = FROST.Presignature(keyshare: shares[0], using: &rng)
            let p1 = FROST.Presignature(keyshare: shares[1], using: &rng)
            var a = try FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: message, presignature: p0)
            var b = try FROST.SigningSession(keyshare: shares[1], signers: [0, 1], message: message, presignature: p1)
            try a.receiveRound1(b.round1Message, from: 1)
            try b.receiveRound1(a.round1Message, from: 0)
            _ = try a.round2()
            let share = try b.round2()
            let aggregate = harness.measure("aggregate \(label)") {
                var s = a
                try? s.receiveRound2(share, from: 1)
                blackHole(try? s.signature())
            }
            rows.append(("sign round 1 \(label) (presignature)", round1.nanosecondsPerOperation,
                         String(format: "%.2f ms", zcashFoundation.round1)))
            rows.append(("sign round 2 \(label) (receive, package, share)", round2.nanosecondsPerOperation,
                         String(format: "%.2f ms", zcashFoundation.round2)))
            rows.append(("aggregate \(label) (receive, sum, libsodium verify)", aggregate.nanosecondsPerOperation,
                         String(format: "%.2f ms", zcashFoundation.aggregate)))
        }
        print("\n## FROST(Ed25519, SHA-512), 2 signers\n")
        print("| operation | median | ZF frost-ed25519 (published) |")
        print("|---|---:|---:|")
        for (name, ns, baseline) in rows { print("| \(name) | \(formatDuration(ns)) | \(baseline) |") }
    }
}
