import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// DKLs23 key-lifecycle benchmarks (hard derivation §15, export §16, xpub derivation dkls23.md §14): every
/// party in this process on one thread, so a figure is the CPU time of all parties together.
/// Wired in as `silentshard-bench dkls-lifecycle`.
enum DKLsLifecycleBenchmarks {
    static func run(harness: Harness) throws {
        var harness = harness
        harness.samples = 21
        var rng = SecureRandom()
        var results: [Harness.Result] = []
        let duo = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let trio = try DKLsInProcess.keygen(partyCount: 3, threshold: 2, using: &rng)
        let path = try DerivationPath("m/44'/60'/0'/0/5", allowHardened: true)

        // Refresh, recovery and import: the DKG engine's other modes (dkls23.md §12.6–12.7).
        func refresh(_ keyshares: [DKLsKeyshare], holders: [PartyIndex], lost: Set<PartyIndex>) -> [DKLsDKG.Mode] {
            keyshares.map { .refresh(holders: holders, keyshare: lost.contains($0.partyIndex) ? nil : $0,
                                     expectedPublicKey: $0.publicKey) }
        }
        let importedKey = Secp256k1.Scalar.random(using: &rng)
        let imported = Secp256k1.Point(base: importedKey)
        let chainCode = rng.randomBytes(count: 32)
        let dkgRuns: [(String, Int, [DKLsDKG.Mode])] = [
            ("refresh 2-of-2", 2, refresh(duo, holders: [0, 1], lost: [])),
            ("refresh 2-of-3", 3, refresh(trio, holders: [0, 1, 2], lost: [])),
            ("recovery 2-of-3 (party 0 lost)", 3, refresh(trio, holders: [1, 2], lost: [0])),
            ("import 2-of-2", 2, (0..<2).map { .importKey(importer: 0, publicKey: imported, chainCode: chainCode,
                                                          privateKey: $0 == 0 ? importedKey : nil) }),
            ("import 2-of-3", 3, (0..<3).map { .importKey(importer: 0, publicKey: imported, chainCode: chainCode,
                                                          privateKey: $0 == 0 ? importedKey : nil) }),
        ]
        var traffic: [(String, Int)] = []
        for (name, n, modes) in dkgRuns {
            results.append(harness.measure(name) {
                blackHole(try? DKLsInProcess.dkg(partyCount: n, threshold: 2, modes: modes, using: &rng))
            })
            var sent = 0
            _ = try DKLsInProcess.dkg(partyCount: n, threshold: 2, modes: modes, using: &rng, observe: { message in
                if message.from == 1 { sent += message.payload.count * (message.isBroadcast ? n - 1 : 1) }
            })
            traffic.append((name, sent))
        }

        for (name, keyshares) in [("2-of-2, 2 participants", duo), ("2-of-3, 2 participants", Array(trio.prefix(2))),
                                  ("2-of-3, 3 participants", trio)] {
            results.append(harness.measure("hard derivation \(name)") {
                blackHole(try? DKLsInProcess.hardDerive(keyshares, path: path, using: &rng))
            })
        }
        let exports: [(String, DKLsKeyshare, [DKLsKeyshare])] = [
            ("2-of-2 (receiver + 1 exporter)", duo[0], [duo[1]]),
            ("2-of-3, any t (receiver + 1 exporter)", trio[0], [trio[1]]),
            ("2-of-3, all n (receiver + 2 exporters)", trio[0], [trio[1], trio[2]]),
        ]
        for (name, receiver, exporters) in exports {
            results.append(harness.measure("export \(name)") {
                blackHole(try? DKLsInProcess.export(receiver: receiver, exporters: exporters, receiverInSet: true, using: &rng))
            })
        }
        // Decoding re-expands the SoftSpokenOT GGM leaves (dkls23.md §11): one Bob and one Alice setup per peer.
        for (name, keyshare) in [("2-of-2", duo[0]), ("2-of-3", trio[0])] {
            let bytes = keyshare.serialized()
            results.append(harness.measure("keyshare decode \(name) (\(bytes.count) bytes)") {
                blackHole(try? DKLsKeyshare(serialized: bytes))
            })
        }
        let softPath = try DerivationPath("m/44/60/0/0/5")
        results.append(harness.measure("xpub at depth 5 (CKDpub + fingerprints + Base58Check)") {
            blackHole(try? DKLsBIP32.deriveChildPublicKey(keyshare: duo[0], path: softPath).base58)
        })
        printTable("DKLs23 key lifecycle (secp256k1), all parties on one core", results)
        print("\n| bytes sent by party 1 | payload bytes |\n|---|---:|")
        for (name, bytes) in traffic { print("| \(name) | \(bytes) |") }
    }
}
