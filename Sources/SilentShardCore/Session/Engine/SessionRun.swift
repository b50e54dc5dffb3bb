import MPCCrypto
import MPCProtocols

/// One party's side of one protocol run as a round machine, typed by what it ends with (`Keyshare`,
/// ``SessionSignature``, ``SessionPresignature``, `ExportedKey`, ``ExportShareSent``): `start` gives the
/// first messages; then, whenever every tag in `awaiting` has arrived from every party in
/// `awaitingSenders`, `advance` consumes them and gives the next messages; `outcome` is set after the
/// last round (`docs/protocol/dkls23.md` §17: "every round is all parties send, all parties receive").
///
/// One small conforming type per protocol run (folder `Session/Runs`), each with its own private state
/// enum; ``SessionDriver`` runs any of them. Randomness is the caller's (`using:`): the driver passes a
/// generator from its ``SessionRandomness`` to every step. Value types holding secrets (shares, nonces,
/// protocol states): a run reflects no children (`SecretReflecting`) and its description names only the
/// party, its peers and the awaited tags.
package protocol SessionRun<Outcome>: Sendable, CustomStringConvertible, SecretReflecting {
    /// What the run ends with.
    associatedtype Outcome: Sendable

    /// Every protocol tag a run of this type may receive (the frame state check, session.md §3.5 step 3).
    static var receivableTags: Set<UInt16> { get }
    /// Who the run waits for and what it ended with.
    var progress: RunProgress<Outcome> { get }
    /// Whether the next step is a fraction of a millisecond (FROST: a few Ed25519 operations). Such steps
    /// run where the caller is, and the app may run the first one before its SETUP goes out (session.md
    /// §5.2 flight F1); the others run on `SessionCompute`'s queue.
    var roundsAreShort: Bool { get }

    /// The first round's messages.
    mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage]
    /// Consumes every awaited message of the current round (exactly one per awaited tag and sender:
    /// ``RunProgress/check(_:)``) and returns this party's next messages (possibly none).
    mutating func advance(_ messages: [ProtocolMessage],
                          using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage]
    /// Records the trio group of the keyshare this run ends with, once the nodes' certificates named it
    /// (a new trio key whose short first round travelled with the SETUP, `session.md` §5.2 flight F1).
    /// Nothing the rounds send depends on it; runs that end in no keyshare record nothing.
    mutating func recordGroup(_ group: [UInt8])
}

extension SessionRun {
    /// This party's index.
    package var local: PartyIndex { progress.local }
    /// The other participants, ascending.
    package var peers: [PartyIndex] { progress.peers }
    /// Protocol tags that must all arrive from every party in `awaitingSenders` before the next `advance`;
    /// empty when done.
    package var awaiting: Set<UInt16> { progress.awaiting }
    /// The parties every tag in `awaiting` must arrive from.
    package var awaitingSenders: [PartyIndex] { progress.awaitingSenders }
    /// What the run ended with (nil until it did).
    package var outcome: Outcome? { progress.outcome }
    /// Whether the run ended.
    package var isFinished: Bool { progress.outcome != nil }
    /// Every protocol tag this run may receive.
    package var receivableTags: Set<UInt16> { Self.receivableTags }
    /// Runs whose steps are long (the default: DKLs23, export, repair).
    package var roundsAreShort: Bool { false }
    /// Runs that end in no keyshare record no group.
    package mutating func recordGroup(_ group: [UInt8]) {}
    /// No secrets: the run's type, party, peers and what it waits for.
    package var description: String { "\(Self.self)(party \(local), peers \(peers), awaiting \(awaiting.sorted()))" }
}

/// The round bookkeeping every run shares: this party, its peers, the tags (and senders) the next round
/// needs, and the outcome once the run ended.
package struct RunProgress<Outcome: Sendable>: Sendable {
    /// This party's index.
    package let local: PartyIndex
    /// The other participants, ascending; every awaited tag must arrive from each of them unless a round
    /// names fewer senders.
    package let peers: [PartyIndex]
    /// The tags the next round needs.
    package private(set) var awaiting: Set<UInt16> = []
    private var awaitingFrom: [PartyIndex]?
    /// What the run ended with.
    package private(set) var outcome: Outcome?

    /// The parties every tag in `awaiting` must arrive from: all `peers` unless a round involves only
    /// some of them (FROST recovery's repair steps).
    package var awaitingSenders: [PartyIndex] { awaitingFrom ?? peers }

    /// `participants` includes `local`.
    package init(local: PartyIndex, participants: [PartyIndex]) {
        self.local = local
        peers = participants.filter { $0 != local }.sorted()
    }

    /// The next round needs `tags` from `senders` (default: every peer).
    package mutating func expect(_ tags: Set<UInt16>, from senders: [PartyIndex]? = nil) {
        awaiting = tags
        awaitingFrom = senders
    }

    /// The run ended with `outcome`.
    package mutating func finish(_ outcome: Outcome) {
        awaiting = []
        awaitingFrom = nil
        self.outcome = outcome
    }

    /// `messages` must be exactly one per awaited tag and sender; else `invalidInput(.invalidParameters)`
    /// (the driver only hands over complete rounds: anything else is the caller's error).
    package func check(_ messages: [ProtocolMessage]) throws(ProtocolError) {
        let senders = awaitingSenders
        let expected = Set(awaiting.flatMap { tag in senders.map { TagFrom(tag: tag, from: $0) } })
        let received = messages.map { TagFrom(tag: $0.tag, from: $0.from) }
        guard Set(received) == expected, received.count == expected.count else { throw .invalidInput(.invalidParameters) }
    }

    /// The payloads of `messages` with `tag`, by ascending sender.
    package static func payloads(_ messages: [ProtocolMessage], tag: UInt16) -> [(PartyIndex, [UInt8])] {
        messages.filter { $0.tag == tag }.sorted { $0.from < $1.from }.map { ($0.from, $0.payload) }
    }

    private struct TagFrom: Hashable {
        let tag: UInt16
        let from: PartyIndex
    }
}

/// Where a session's protocol randomness comes from (injectable, so tests can pin it). Each run step
/// asks for a generator; production uses the system's CSPRNG (`SecureRandom`, libsodium).
package struct SessionRandomness: Sendable {
    private let make: @Sendable () -> any RandomNumberGenerator

    /// Randomness from `make`, called once per run step. A test that pins randomness must return a
    /// generator that continues one stream across calls (never the same bytes twice).
    package init(_ make: @escaping @Sendable () -> any RandomNumberGenerator) { self.make = make }

    /// The system CSPRNG.
    package static let system = SessionRandomness { SecureRandom() }

    /// A generator for one step.
    package func generator() -> any RandomNumberGenerator { make() }
}
