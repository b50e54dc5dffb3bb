import ChildProcesses
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
@testable import trio

/// Issue 22 item 1 with real processes: the app (`silentshard-test-app`, its own process over a file
/// storage) is SIGKILLed at every point of a presign and of a preSignatureFinal where it could leave
/// different state — before and after each storage write, each WebSocket message, the POST — and the app
/// restarted (a new session over the same storage directory and device key) must find exactly what it
/// can still use:
///
/// * no presignature is finished on two messages (a recorded finish is resumed on its message only; any
///   other is `presignatureConsumed` locally), and every signature verifies;
/// * no presignature the app holds is lost, and none is held twice;
/// * at the nodes, the only halves left are orphans of kills between X's STORED and the app's record —
///   at most one per presign kill — and they are gone once they expire (the node's GC at a later clock).
@Suite("Issue 22: presignatures survive an app killed between any two steps", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioPresignatureRestartTests {
    static let binary = PythonPeer.repositoryRoot.appendingPathComponent(".build/debug/silentshard-test-app")

    /// What one run of the test app printed, and whether it stopped at its pause point.
    struct AppRun {
        var lines: [String]
        var paused: Bool
    }

    /// Runs the test app (off the cooperative pool); kills it with SIGKILL if it paused.
    static func run(_ arguments: [String]) async throws -> AppRun {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(arguments) })
            }.start()
        }
    }

    private static func runBlocking(_ arguments: [String]) throws -> AppRun {
        let output = Pipe()
        let process = try ChildProcess.run(binary, arguments: arguments, standardOutput: .pipe(output), standardError: .null)
        let reader = output.fileHandleForReading
        var text = ""
        while true {
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("PAUSED ") }) {
                process.kill()
                _ = process.waitForExit(timeout: 60)
                return AppRun(lines: text.split(separator: "\n").map(String.init), paused: true)
            }
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        _ = process.waitForExit(timeout: 60)
        return AppRun(lines: text.split(separator: "\n").map(String.init), paused: false)
    }

    static func signature(hex: String, algorithm: Keyshare.Algorithm) throws -> Signature {
        let bytes = try Hex.decode(hex)
        switch algorithm {
        case .ecdsa:
            try #require(bytes.count == 65)
            return try Signature(r: Data(bytes[0..<32]), s: Data(bytes[32..<64]), recoveryId: bytes[64])
        case .eddsa:
            return try Signature(eddsa: Data(bytes))
        }
    }

    @Test(arguments: [(Keyshare.Algorithm.ecdsa, TrioSigner.nodeA), (.eddsa, .nodeB)])
    func killedBetweenEveryStep(algorithm: Keyshare.Algorithm, signer: TrioSigner) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "build the silentshard-test-app product first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presig-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let databases = (a: directory.appendingPathComponent("a.sqlite").path, b: directory.appendingPathComponent("b.sqlite").path)
        let masterKey = NodeMasterKey.random()
        let cluster = try TrioCluster.start(token: "t", databases: (.sqlite(path: databases.a),
                                                                                     .sqlite(path: databases.b)),
                                                              masterKey: masterKey)
        let storageDirectory = directory.appendingPathComponent("app").path
        let seed = SecureRandom.bytes(count: 32)
        let device = SoftwareEd25519MessageSigner(signingKey: try Ed25519.SigningKey(seed: seed))
        // Every FINAL_REQUEST the app sent, from the killed processes and the restarted app alike.
        let ledger = FinalRequestLedger()
        func recordPosts(_ run: AppRun) throws {
            for line in run.lines where line.hasPrefix("POSTED ") {
                let fields = line.split(separator: " ")
                try #require(fields.count == 3)
                ledger.record(presignatureId: Data(try Hex.decode(String(fields[1]))), requestHash: Data(try Hex.decode(String(fields[2]))))
            }
        }
        // The app as restarted after each kill: a new session over the same storage and device key.
        func restartedApp() throws -> TrioSession {
            let config = WebsocketConfig(url: cluster.url, authenticationToken: "t")
            let storage = try FileStorageClient(directory: storageDirectory)
            let client = LedgerRecordingClient(inner: TrioNetworkClient(websocketConfig: config), ledger: ledger)
            return algorithm == .ecdsa
                ? SilentShard.ECDSA.trioInitiator(messageSigner: device, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                                  storageClient: storage, networkClient: client, actionProvider: .ecdsa)
                : SilentShard.EdDSA.trioInitiator(messageSigner: device, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                                  storageClient: storage, networkClient: client, actionProvider: .eddsa)
        }
        let keyshare = try await restartedApp().keygen()
        let arguments = ["--url", cluster.url, "--cloud-key", cluster.cloudVerifyingKey, "--storage", storageDirectory,
                         "--device-seed", Hex.encode(seed), "--key-id", keyshare.keyId, "--token", "t",
                         "--algorithm", algorithm == .ecdsa ? "ecdsa" : "eddsa", "--signer", signer == .nodeA ? "a" : "b"]
        let nodeStore = signer == .nodeA ? cluster.storeA : cluster.storeB
        var messagesById: [Data: Set<Data>] = [:]
        func signed(_ signature: Signature, id: Data, message: Data) throws {
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
            messagesById[id, default: []].insert(message)
        }
        func freshMessage() -> Data { Data(SecureRandom.bytes(count: 32)) }

        // 1. preSign, killed at every point. After each kill the restarted app finds the presignature iff
        //    its record was written, never pending, and finishes it.
        var presignKills = 0, killsWithoutRecord = 0, appHeld = 0, point = 1
        while true {
            let run = try await Self.run(["presign"] + arguments + ["--pause-at", "\(point)"])
            if run.paused { presignKills += 1 } else {
                #expect(run.lines.last?.hasPrefix("PRESIGNED ") == true, "\(run.lines.suffix(2))")
            }
            let app = try restartedApp()
            let listed = try await app.preSignatures(keyshare: keyshare)
            #expect(listed.count <= 1, "kill point \(point)")
            if run.paused && listed.isEmpty { killsWithoutRecord += 1 }
            for presignature in listed {
                appHeld += 1
                #expect(presignature.pendingMessage == nil && !presignature.isConsumed)
                let message = freshMessage()
                try signed(try await app.preSignatureFinal(preSignature: presignature, message: message), id: presignature.id,
                           message: message)
            }
            #expect(try await app.preSignatures(keyshare: keyshare).isEmpty)
            // What X still holds can only be orphans: halves stored before a kill that came before the app's record.
            #expect(try nodeStore.presignatureCount(keyId: keyshare.keyId) <= killsWithoutRecord)
            guard run.paused else { break }
            point += 1
            try #require(point < 100, "the presign never completed")
        }
        #expect(point > 6, "too few kill points: \(point)")
        #expect(appHeld >= 1)

        // 2. preSignatureFinal, killed at every point (each time with a fresh presignature made to the end).
        point = 1
        var resumed = 0
        while true {
            let presigned = try await Self.run(["presign"] + arguments)
            let line = try #require(presigned.lines.last(where: { $0.hasPrefix("PRESIGNED ") }))
            let id = Data(try Hex.decode(String(line.dropFirst("PRESIGNED ".count))))
            let message = freshMessage()
            let run = try await Self.run(["finish"] + arguments + ["--message", Hex.encode([UInt8](message)),
                                                                   "--pause-at", "\(point)"])
            try recordPosts(run)
            let app = try restartedApp()
            if !run.paused {
                let fields = try #require(run.lines.last(where: { $0.hasPrefix("SIGNED ") })).split(separator: " ")
                try #require(fields.count == 4)
                #expect(fields[1] == Hex.encode([UInt8](id)) && fields[2] == Hex.encode([UInt8](message)))
                try signed(try Self.signature(hex: String(fields[3]), algorithm: algorithm), id: id, message: message)
                #expect(try await app.preSignatures(keyshare: keyshare).isEmpty)
                break
            }
            let listed = try await app.preSignatures(keyshare: keyshare)
            #expect(listed.count <= 1 && listed.allSatisfy { $0.id == id }, "kill point \(point)")
            if let presignature = listed.first {
                if let pending = presignature.pendingMessage {
                    // The finish was recorded: only its message can finish it, here by resending the request.
                    #expect(pending == message)
                    await #expect(throws: SilentShardError.presignatureConsumed) {
                        _ = try await app.preSignatureFinal(preSignature: presignature, message: freshMessage())
                    }
                    try signed(try await app.preSignatureFinal(preSignature: presignature, message: message), id: id, message: message)
                    resumed += 1
                } else {
                    // Killed before the record: nothing was sent, any message finishes it.
                    let other = freshMessage()
                    try signed(try await app.preSignatureFinal(preSignature: presignature, message: other), id: id, message: other)
                }
            }
            // Finished one way or the other: X holds nothing of it (beyond the orphans of part 1).
            #expect(try await app.preSignatures(keyshare: keyshare).isEmpty)
            point += 1
            try #require(point < 100, "the finish never completed")
        }
        #expect(resumed >= 2, "kills after the tombstone: \(resumed)")

        // No presignature was ever finished on two messages, nor sent two different requests (a resend after a
        // kill repeats the recorded bytes exactly).
        #expect(messagesById.values.allSatisfy { $0.count == 1 }, "\(messagesById.values.map(\.count))")
        #expect(ledger.eachPresignatureHadOneRequest, "\(ledger.distinctRequestCounts.values)")
        #expect(ledger.distinctRequestCounts.count >= messagesById.count, "every signature came from a recorded request")
        // 3. The orphans expire: X's garbage collection at a clock past the longest lifetime leaves nothing.
        let orphans = try nodeStore.presignatureCount(keyId: keyshare.keyId)
        #expect(orphans <= killsWithoutRecord && killsWithoutRecord <= presignKills)
        await cluster.stop()
        let later = Date().addingTimeInterval(TimeInterval(SessionConstants.maximumPresignatureTTLSeconds) + 3600)
        let gc = try NodeShareStore(path: signer == .nodeA ? databases.a : databases.b, masterKey: masterKey, clock: { later })
        #expect(try gc.purgeExpired() == orphans)
        #expect(try gc.presignatureCount(keyId: keyshare.keyId) == 0)
    }
}
