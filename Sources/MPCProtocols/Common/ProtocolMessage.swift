/// One protocol message: who sent it, to whom (nil for a broadcast), which message it is (the
/// session layer's protocol tag, `docs/protocol/session.md` §3.7) and its payload. Point-to-point messages must
/// travel end-to-end encrypted; broadcasts signed.
public struct ProtocolMessage: Sendable, Equatable {
    public let tag: UInt16
    public let from: PartyIndex
    public let to: PartyIndex?
    public let payload: [UInt8]

    public init(tag: UInt16, from: PartyIndex, to: PartyIndex?, payload: [UInt8]) {
        self.tag = tag
        self.from = from
        self.to = to
        self.payload = payload
    }

    /// Whether the message is a broadcast.
    public var isBroadcast: Bool { to == nil }
}

extension ProtocolMessage: CustomStringConvertible {
    /// Tag, route and size only: payloads may be secret.
    public var description: String {
        "ProtocolMessage(tag: 0x\(String(tag, radix: 16)), \(from) → \(to.map(String.init) ?? "all"), \(payload.count) bytes)"
    }
}

/// Collects the messages one round expects: exactly one with `tag` from each of `senders`, addressed to
/// `receiver` (point-to-point) or broadcast. Anything else is Abort(sender); nothing is consumed on error.
struct RoundInbox {
    let tag: UInt16
    let broadcast: Bool
    let receiver: PartyIndex
    let senders: Set<PartyIndex>

    func collect(_ messages: [ProtocolMessage]) throws(ProtocolError) -> [PartyIndex: [UInt8]] {
        var payloads: [PartyIndex: [UInt8]] = [:]
        for message in messages where message.tag == tag && message.isBroadcast == broadcast {
            guard senders.contains(message.from) else { throw .abort(party: message.from, reason: .unexpectedSender) }
            if !broadcast && message.to != receiver { throw .abort(party: message.from, reason: .unexpectedSender) }
            guard payloads[message.from] == nil else { throw .abort(party: message.from, reason: .duplicateMessage) }
            payloads[message.from] = message.payload
        }
        if let missing = senders.sorted().first(where: { payloads[$0] == nil }) {
            throw .abort(party: missing, reason: .missingMessages)
        }
        return payloads
    }
}
