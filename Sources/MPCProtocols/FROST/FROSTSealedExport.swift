import MPCCrypto

extension FROST.Export {
    /// Export with the share encrypted to the receiver's one-time X25519 key, for exports whose
    /// message travels through a third party (the duo export POST goes through the app's backend,
    /// `docs/protocol/session.md` §4.6/§9.3: "FROST: same shape"). The construction is dkls23.md §16 with
    /// the FROST key id and generation:
    ///
    /// * ctx = H("export/ctx"; setup_hash, instance_id, key_id, gen, enc(E));
    /// * exporter i: fresh X25519 (esk_i, epk_i), ss = X25519(esk_i, rpk) (all-zero → Abort(–)),
    ///   key = H("export/key"; ctx, u8(i), epk_i, rpk, ss), aad = H("export/aad"; ctx, u8(i)),
    ///   message = epk_i ‖ ChaCha20-Poly1305(key, nonce 0^12, aad, s_i) — 80 bytes;
    /// * receiver: open (failure → Abort(i)), s_i < ℓ, s_i·B = Y_i, interpolate over E, x·B = PK.
    ///
    /// The fixed nonce is safe only because every key is single-use (fresh esk_i each call).
    public enum Sealed {
        /// epk_i ‖ ct (32 + 32 + 16).
        public static let messageSize = 80

        /// What exporters and the receiver of one export share.
        public struct Parameters: Sendable {
            public let keyshare: FROST.Keyshare
            /// E: the parties whose shares are combined, ascending, #E ≥ t; must contain the receiver
            /// (the receiver uses its own share).
            public let exporters: [PartyIndex]
            /// ρ: the receiving party.
            public let receiver: PartyIndex
            /// rpk: the receiver's one-time X25519 public key (from the setup).
            public let receiverKey: X25519.PublicKey
            public let instanceId: [UInt8]
            public let setupHash: [UInt8]

            public init(keyshare: FROST.Keyshare, exporters: [PartyIndex], receiver: PartyIndex,
                        receiverKey: X25519.PublicKey, instanceId: [UInt8], setupHash: [UInt8]) throws(ProtocolError) {
                let sorted = Array(Set(exporters)).sorted()
                guard sorted.count == exporters.count, sorted.count >= Int(keyshare.threshold),
                      sorted.allSatisfy({ $0 < keyshare.parties }), sorted.contains(receiver),
                      sorted.contains(keyshare.party), instanceId.count == 32, setupHash.count == 32
                else { throw .invalidInput(.invalidParameters) }
                self.keyshare = keyshare
                self.exporters = sorted
                self.receiver = receiver
                self.receiverKey = receiverKey
                self.instanceId = instanceId
                self.setupHash = setupHash
            }

            /// ctx = H("export/ctx"; setup_hash, instance_id, key_id, gen, enc(E)).
            var context: [UInt8] {
                DKLsHash.h("export/ctx", setupHash, instanceId, keyshare.keyId, keyshare.generation,
                           DKLsHash.encode(set: exporters))
            }
        }

        /// At exporter i ∈ E, i ≠ ρ: the 80-byte message carrying s_i encrypted to rpk.
        public static func exportShare<R: RandomNumberGenerator>(_ parameters: Parameters, using rng: inout R)
            throws(ProtocolError) -> [UInt8] {
            let keyshare = parameters.keyshare, i = keyshare.party
            guard i != parameters.receiver else { throw .invalidInput(.invalidParameters) }
            var ephemeral: X25519.PrivateKey?
            repeat { ephemeral = try? X25519.PrivateKey(rawRepresentation: rng.randomBytes(count: 32)) } while ephemeral == nil
            guard let esk = ephemeral,
                  let shared = try? esk.sharedSecret(with: parameters.receiverKey)   // all-zero result fails here
            else { throw .abort(party: nil, reason: .invalidParameters) }
            let epk = esk.publicKey.bytes
            let (key, aad) = DKLsExport.keyAndAAD(context: parameters.context, exporter: i, ephemeral: epk,
                                                  receiverKey: parameters.receiverKey.bytes, sharedSecret: shared)
            guard let ciphertext = try? ChaCha20Poly1305.seal(keyshare.secretShare.bytes, key: key,
                                                              nonce: [UInt8](repeating: 0, count: 12), associatedData: aad)
            else { throw .abort(party: nil, reason: .invalidParameters) }
            return epk + ciphertext
        }

        /// At the receiver ρ (its keyshare in `parameters`, its one-time private key rsk): opens every
        /// other exporter's message (Abort(k) on any failure), checks s_k·B = Y_k, interpolates over E
        /// and checks x·B = PK (`FROST.Export.reconstruct`). Returns the group secret scalar x.
        public static func receive(_ parameters: Parameters, privateKey receiverKey: X25519.PrivateKey,
                                   messages: [PartyIndex: [UInt8]]) throws(ProtocolError) -> FROST.Scalar {
            let keyshare = parameters.keyshare
            guard keyshare.party == parameters.receiver, receiverKey.publicKey == parameters.receiverKey else {
                throw .invalidInput(.invalidParameters)
            }
            let senders = parameters.exporters.filter { $0 != parameters.receiver }
            guard Set(messages.keys) == Set(senders) else {
                let stray = messages.keys.sorted().first { !senders.contains($0) }
                throw .abort(party: stray, reason: stray == nil ? .missingMessages : .unexpectedSender)
            }
            let context = parameters.context
            var opened: [PartyIndex: [UInt8]] = [:]
            for k in senders {
                opened[k] = try open(messages[k] ?? [], from: k, context: context, receiverKey: receiverKey)
            }
            return try FROST.Export.reconstruct(keyshare, messages: opened)
        }

        /// Decrypts one exporter's message to its 32-byte share encoding.
        private static func open(_ payload: [UInt8], from k: PartyIndex, context: [UInt8],
                                 receiverKey: X25519.PrivateKey) throws(ProtocolError) -> [UInt8] {
            guard payload.count == messageSize else { throw .abort(party: k, reason: .malformedMessage) }
            let epk = Array(payload[0..<32]), ciphertext = Array(payload[32..<80])
            guard let peer = try? X25519.PublicKey(bytes: epk), let shared = try? receiverKey.sharedSecret(with: peer) else {
                throw .abort(party: k, reason: .malformedMessage)   // all-zero shared secret (small-order epk)
            }
            let (key, aad) = DKLsExport.keyAndAAD(context: context, exporter: k, ephemeral: epk,
                                                  receiverKey: receiverKey.publicKey.bytes, sharedSecret: shared)
            guard let plaintext = try? ChaCha20Poly1305.open(ciphertext, key: key, nonce: [UInt8](repeating: 0, count: 12),
                                                             associatedData: aad)
            else { throw .abort(party: k, reason: .malformedMessage) }
            return plaintext
        }
    }
}
