import MPCProtocols

/// A stream (session.md §3.4): (sender, receiver field) within one session.
package struct StreamID: Hashable, Sendable {
    package let sender: PartyIndex
    package let receiver: PartyIndex
    package init(sender: PartyIndex, receiver: PartyIndex) {
        self.sender = sender
        self.receiver = receiver
    }
}

/// The receiving side of session.md §3.4: the next expected `seq` of every stream. `check` never changes state;
/// `advance` is called only after the frame authenticated (session.md §3.5 step 6).
package struct IncomingSequencer: Sendable, Equatable {
    private var next: [StreamID: UInt32] = [:]

    package init() {}

    /// The next expected seq of a stream (0 before any frame).
    package func expected(_ stream: StreamID) -> UInt32 { next[stream] ?? 0 }

    /// SEQUENCE unless `seq` is exactly the next expected value (a gap, duplicate or reorder).
    package func check(_ stream: StreamID, seq: UInt32) throws(SessionError) {
        guard seq == expected(stream) else { throw .detected(.sequence, blamed: nil) }
    }

    /// Records a frame of the stream as received.
    package mutating func advance(_ stream: StreamID) {
        let current = expected(stream)
        next[stream] = current == .max ? current : current + 1
    }
}

/// The sending side: `seq` = the number of sequenced frames this party previously put on the stream.
package struct OutgoingSequencer: Sendable, Equatable {
    private var next: [PartyIndex: UInt32] = [:]
    /// This party.
    package let sender: PartyIndex

    package init(sender: PartyIndex) { self.sender = sender }

    /// Assigns the next seq on the stream to `receiver` (0xFF = all); once assigned it is used up.
    package mutating func assign(receiver: PartyIndex) -> UInt32 {
        let seq = next[receiver] ?? 0
        next[receiver] = seq + 1
        return seq
    }
}
