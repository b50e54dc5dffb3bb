import SilentShardCore

/// Frames and answers the node-side refusal tests build and read (duo and trio alike).
package enum NodeAnswers {
    /// A FINAL_REQUEST frame for presignature `id` to node `receiver` whose sealed part is junk (nothing the tests
    /// send it to gets that far).
    package static func junkFinalRequest(id: InstanceID, receiver: UInt8 = 1) -> [UInt8] {
        let sealed = [UInt8](repeating: 0xAB, count: 176)
        let header = FrameHeader(kind: .finalRequest, sender: 0, receiver: receiver, length: UInt32(sealed.count - 16),
                                 instanceID: id)
        return Frame(header: header, nonce: [UInt8](repeating: 7, count: 24), sealed: sealed).encoded()
    }

    /// The REJECT code of a node's answer (nil: not a REJECT).
    package static func rejectCode(_ answer: [UInt8]?) -> WireCode? {
        guard let answer, let frame = try? Frame.parseSingle(answer), frame.header.kind == .reject else { return nil }
        return (try? RejectPayload(bytes: frame.body))?.code
    }
}
