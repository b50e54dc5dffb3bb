import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
import trio

/// Issue 22 item 6 in trio: the POST of preSignFinal is a step too; a refused second use is an
/// operation that failed with its kind; the fallback from A to B is one `sign` operation.
@Suite("Trio events for the app's logger", .timeLimit(.minutes(30)))
struct TrioEventLoggingTests {
    @Test func presignaturesAndTheirPostAreReported() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let logger = RecordingLogger()
        fixture.session.logger = logger
        let keyshare = try await fixture.session.keygen()
        let presignature = try await fixture.session.preSignature(keyshare: keyshare)
        logger.reset()
        let message = testMessage(.ecdsa, "finish")
        let signature = try await fixture.session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
        #expect(logger.events.map(\.phase) == [.operationStarted, .stepFinished, .operationFinished])
        #expect(logger.events.allSatisfy { $0.operation == "preSignFinal" && $0.keyId == keyshare.keyId && $0.mode == .trio })
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
}
