import Foundation
import MPCCrypto

extension FROST {
    /// Round one of signing done ahead of time: the secret nonce pair and its public commitments
    /// (D, E), bound to one keyshare (key id, generation, party). Single use.
    ///
    /// Design: a final class whose nonces sit behind a lock and are erased by the first
    /// ``take()``; every later use is `invalidInput(.presignatureAlreadyUsed)`. A class (rather than
    /// a `~Copyable` value with a consuming method) because presignatures live in caches and
    /// collections shared between tasks, because a copy of a value type would silently duplicate
    /// the nonces, and because a reuse must be a runtime, typed error that the node can report
    /// and test, not only a compile-time one. Reusing a FROST nonce pair with two different
    /// messages or commitment lists reveals the secret share.
    public final class Presignature: @unchecked Sendable, CustomStringConvertible {
        /// The party that made it.
        public let party: PartyIndex
        /// The keyshare it belongs to.
        public let keyId: [UInt8]
        public let generation: [UInt8]
        /// (D, E), public.
        public let commitment: SigningCommitment

        private let lock = NSLock()
        private var nonces: SigningNonces?   // guarded by `lock`

        /// Round one for `keyshare`'s party: fresh nonces (RFC 9591 `commit`).
        public init(keyshare: Keyshare, using rng: inout some RandomNumberGenerator) {
            let nonces = SigningNonces(secret: keyshare.secretShare, using: &rng)
            self.party = keyshare.party
            self.keyId = keyshare.keyId
            self.generation = keyshare.generation
            self.commitment = nonces.commitment(for: keyshare.identifier)
            self.nonces = nonces
        }

        /// The round-one BCAST payload (tag 0x1101): enc(D) ‖ enc(E), 64 bytes.
        public var round1Message: [UInt8] { commitment.hiding.bytes + commitment.binding.bytes }

        /// Whether the nonces were already taken.
        public var isConsumed: Bool {
            lock.lock()
            defer { lock.unlock() }
            return nonces == nil
        }

        /// Hands out the nonces exactly once and erases them.
        func take() throws(ProtocolError) -> SigningNonces {
            lock.lock()
            defer { lock.unlock() }
            guard let taken = nonces else { throw .invalidInput(.presignatureAlreadyUsed) }
            nonces = nil
            return taken
        }

        public var description: String {
            "FROST.Presignature(party: \(party), consumed: \(isConsumed), nonces redacted)"
        }
    }
}
