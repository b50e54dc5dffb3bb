import MPCCrypto
import MPCProtocols

/// One protocol run typed by what it ends with: `ProtocolRun<Keyshare>` for keygen, refresh, recover,
/// import and hard derivation, `ProtocolRun<SessionSignature>` for sign, `ProtocolRun<SessionPresignature>`
/// for preSign, `ProtocolRun<ExportedKey>` / `ProtocolRun<ExportShareSent>` for export's receiver and
/// exporters. Made by ``SessionProtocolMachine``'s constructors and run by ``SessionDriver``, which
/// returns the outcome itself.
package struct ProtocolRun<Outcome: ProtocolOutcomeValue>: Sendable {
    /// The round machine.
    package var machine: SessionProtocolMachine

    init(_ machine: SessionProtocolMachine) { self.machine = machine }

    /// Every protocol tag this run may receive (the frame state check, session.md §3.5 step 3).
    package var receivableTags: Set<UInt16> { machine.receivableTags }
    /// Whether the run's rounds are short enough to run where the caller is (FROST).
    package var roundsAreShort: Bool { machine.roundsAreShort }

    /// The run's outcome once its machine finished. Each constructor pairs the machine's states with
    /// the one outcome they end in, so a finished run always has its `Outcome`; the check is kept (a
    /// typed error, not a trap) so that a future machine state that broke the pairing fails its tests
    /// loudly instead of returning a wrong value.
    func outcome(of finished: SessionProtocolMachine) throws(SilentShardError) -> Outcome {
        guard let recorded = finished.outcome, let outcome = Outcome(recorded) else {
            throw .invalidInput(reason: "the protocol machine ended without its run's outcome")
        }
        return outcome
    }
}

/// Where a session's protocol randomness comes from (docs/design.md §5.2: injectable, so tests can pin it). Each
/// machine step asks for a generator; production uses the system's CSPRNG (`SecureRandom`, libsodium).
package struct SessionRandomness: Sendable {
    private let make: @Sendable () -> any RandomNumberGenerator

    /// Randomness from `make`, called once per machine step. A test that pins randomness must return a
    /// generator that continues one stream across calls (never the same bytes twice).
    package init(_ make: @escaping @Sendable () -> any RandomNumberGenerator) { self.make = make }

    /// The system CSPRNG.
    package static let system = SessionRandomness { SecureRandom() }

    /// A generator for one step.
    package func generator() -> any RandomNumberGenerator { make() }
}
