@testable import CloudNode
import SilentShardCore
import Testing

/// Issue 34 item 4 (the node-neutral failure type, first files): the node's own failures that never pass through the
/// engine — a stored share record that does not decode, a SETUP the node's run factory refuses — are the wire's
/// `SessionError`, no longer the app SDK's public error type, and answer the same REJECT codes as before.
@Suite("Issue 34 item 4: node-originated failures are SessionError, with the codes of before")
struct NodeFailureTypeTests {
    static let magic = Array("SSND".utf8)

    @Test func issue34_item4_corruptShareRecordIsInternalAsBefore() {
        let corrupt: [[UInt8]] = [[], Self.magic, Self.magic + [2, 1, 7, 7], Self.magic + [1, 0, 7], Self.magic + [1, 3, 1, 2, 3]]
        for bytes in corrupt {
            #expect(throws: SessionError.detected(.internalError, blamed: nil)) { try NodeShareBlob(bytes: bytes) }
            // The REJECT code a preSignFinal answers for it: INTERNAL, as for the app error type it threw before.
            do {
                _ = try NodeShareBlob(bytes: bytes)
                Issue.record("decoded \(bytes)")
            } catch {
                #expect(NodeStepRunner.wireCode(error) == .internalError)
            }
        }
        #expect(NodeStepRunner.wireCode(SilentShardError.invalidKeyshare(reason: "node share record")) == .internalError)
        // A well-formed record still decodes.
        let blob = NodeShareBlob(deviceIdentity: [1, 2], protocolBytes: [9, 9, 9])
        #expect((try? NodeShareBlob(bytes: blob.encoded))?.protocolBytes == [9, 9, 9])
    }
}
