import MPCCrypto

/// A flag shared by every copy of a round state: the round function that holds the state's secrets
/// may run once. A second run would reuse the round's secrets with fresh randomness (DKLs23 round 2:
/// the same OT outputs with a new mask, leaking the inputs) or mint a second presignature with the
/// same nonce; so it is refused with `invalidInput(.stateAlreadyConsumed)`.
///
/// Rounds consume their state only after the complete set of messages has been collected (an
/// incomplete set — `missingMessages` — leaves the state usable).
final class ConsumeOnce: Sendable {
    private let consumed = LockedValue(false)

    init() {}

    func consume() throws(ProtocolError) {
        let wasConsumed = consumed.withLock { value in
            defer { value = true }
            return value
        }
        if wasConsumed { throw .invalidInput(.stateAlreadyConsumed) }
    }
}
