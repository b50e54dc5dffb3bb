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

        private init(party: PartyIndex, keyId: [UInt8], generation: [UInt8], identifier: Identifier, nonces: SigningNonces) {
            self.party = party
            self.keyId = keyId
            self.generation = generation
            self.commitment = nonces.commitment(for: identifier)
            self.nonces = nonces
        }

        /// The stored form (secret; store it encrypted and delete it in the transaction that uses it):
        /// `u8 version (1) ‖ u8 party ‖ u8 len ‖ key_id ‖ u8 len ‖ gen ‖ sc(d) ‖ sc(e)`. A consumed
        /// presignature has none (`presignatureAlreadyUsed`).
        public func serialized() throws(ProtocolError) -> [UInt8] {
            lock.lock()
            let current = nonces
            lock.unlock()
            guard let current, keyId.count < 256, generation.count < 256 else { throw .invalidInput(.presignatureAlreadyUsed) }
            return [1, party, UInt8(keyId.count)] + keyId + [UInt8(generation.count)] + generation
                + current.hiding.bytes + current.binding.bytes
        }

        /// Restores a stored presignature of `keyshare` (same party, key id, generation; canonical
        /// non-zero nonces); anything else is `invalidInput(.presignatureMismatch)`.
        public static func deserialize(_ bytes: [UInt8], keyshare: Keyshare) throws(ProtocolError) -> Presignature {
            let invalid = ProtocolError.invalidInput(.presignatureMismatch)
            var reader = ByteReader(bytes, from: nil)
            do {
                guard try reader.readUInt8() == 1, try reader.readUInt8() == keyshare.party else { throw invalid }
                let keyId = try reader.read(Int(try reader.readUInt8()))
                let generation = try reader.read(Int(try reader.readUInt8()))
                let hiding = try reader.readEd25519Scalar()
                let binding = try reader.readEd25519Scalar()
                try reader.finish()
                guard keyId == keyshare.keyId, generation == keyshare.generation, !hiding.isZero, !binding.isZero else {
                    throw invalid
                }
                return Presignature(party: keyshare.party, keyId: keyId, generation: generation,
                                    identifier: keyshare.identifier, nonces: SigningNonces(hiding: hiding, binding: binding))
            } catch {
                throw invalid
            }
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
