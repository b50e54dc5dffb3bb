import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing

/// Issue 22 item 6: the app's logger hears every operation's start and end and each step in between,
/// with bytes and error kinds, and never a secret; the POST of preSignFinal is a step too; a refused
/// second use is an operation that failed with its kind; trio's fallback from A to B is one `sign` operation.
@Suite("Events for the app's logger", .heavy, .timeLimit(.minutes(30)))
struct EventLoggingTests {
    @Test(arguments: Keyshare.Mode.allCases)
    func operationsAndStepsAreReportedWithTheirBytes(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let logger = RecordingLogger()
        fixture.session.logger = logger
        let keyshare = try await fixture.session.keygen()
        let keygenEvents = logger.events
        #expect(keygenEvents.map(\.phase) == [.operationStarted, .stepFinished, .operationFinished])
        #expect(keygenEvents.map(\.operation) == ["keygen", "keygen", "keygen"])
        #expect(keygenEvents[0].keyId == nil && keygenEvents[2].keyId == keyshare.keyId)
        let step = keygenEvents[1], finished = keygenEvents[2]
        // Every byte the app sent went through the step; the operation adds up its steps.
        let sent = fixture.client.sentMessages.reduce(0) { $0 + $1.count }
        #expect(step.bytesSent == sent && step.bytesSent > 0 && step.bytesReceived > 0)
        #expect(finished.bytesSent == step.bytesSent && finished.bytesReceived == step.bytesReceived)
        #expect(finished.errorKind == nil && finished.duration != nil)
        #expect(keygenEvents.allSatisfy { $0.mode == mode && $0.algorithm == .ecdsa })

        // A refused operation: its kind, no step when nothing was sent.
        logger.reset()
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Data([1, 2, 3]))
        }
        #expect(logger.events.map(\.phase) == [.operationStarted, .operationFinished])
        #expect(logger.events.last?.errorKind == "invalidInput")

        // Nothing secret in any event: no share bytes, no message, no signature.
        logger.reset()
        let hash = Data(SHA256.hash(Array("logged".utf8)))
        let signature = try await fixture.session.signature(keyshare: keyshare, message: hash)
        let text = logger.events.map(\.description).joined(separator: "\n")
        for secret in [Hex.encode([UInt8](keyshare.serialized()).suffix(64)), Hex.encode([UInt8](hash)),
                       Hex.encode([UInt8](signature.rawRepresentation))] {
            #expect(!text.contains(secret))
        }
        #expect(text.contains("\(mode) ecdsa sign finished key=\(keyshare.keyId.prefix(16))"))
    }

    @Test(arguments: Keyshare.Mode.allCases)
    func presignaturesAndTheirPostAreReported(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let logger = RecordingLogger()
        fixture.session.logger = logger
        let keyshare = try await fixture.session.keygen()
        let presignature = try await fixture.session.preSignature(keyshare: keyshare)
        logger.reset()
        let message = testMessage(.ecdsa, "finish")
        let signature = try await fixture.session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
        #expect(logger.events.map(\.phase) == [.operationStarted, .stepFinished, .operationFinished])
        #expect(logger.events.allSatisfy { $0.operation == "preSignFinal" && $0.keyId == keyshare.keyId && $0.mode == mode })
        let post = logger.events[1]
        #expect(post.bytesSent > 0 && post.bytesReceived > 0 && post.errorKind == nil)
        #expect(logger.events[2].bytesSent == post.bytesSent)

        logger.reset()
        await #expect(throws: SilentShardError.presignatureConsumed) {
            _ = try await fixture.session.preSignatureFinal(preSignature: presignature, message: testMessage(.ecdsa, "other"))
        }
        #expect(logger.events.map(\.phase) == [.operationStarted, .operationFinished])
        #expect(logger.events.last?.errorKind == "presignatureConsumed")

        logger.reset()
        _ = try await fixture.session.signature(keyshare: keyshare, message: message)
        #expect(logger.events.filter { $0.phase != .stepFinished }.map(\.operation) == ["sign", "sign"], "one operation")
    }

    @Test func errorKindsAreCaseNamesWithoutPayloads() {
        #expect(SilentShardError.timeout.kind == "timeout")
        #expect(SilentShardError.keyNotFound(keyId: "ab").kind == "keyNotFound")
        #expect(SilentShardError.network(.closedByPeer(code: 1011, reason: "internal error")).kind == "network.closedByPeer")
        #expect(SilentShardError.rejected(code: 0x0301, name: "KEY_BUSY", by: .node(1), authenticated: true).kind == "rejected.KEY_BUSY")
        #expect(SilentShardError.authenticationFailed(reason: "invalid token").kind == "authenticationFailed")
        #expect(SilentShardError.staleBackup(keyId: "ab", generation: Data(count: 32)).kind == "staleBackup")
    }
}
