import MPCCrypto

/// Export of the private key to one receiving party (dkls23.md §16). The receiver ρ makes a one-time X25519
/// key pair whose public key travels in the setup; every exporter i ∈ E, i ≠ ρ, sends one 80-byte P2P
/// message epk_i ‖ ChaCha20-Poly1305(sc(s_i)); the receiver checks every s_i against S_i, interpolates
/// x over E and checks x·G = P. If ρ ∈ E it uses its own share.
///
/// The receiver must be a party of the key (it checks the shares against its keyshare's public shares);
/// a non-party receiver is not specified (dkls23.md §16). E may be any set of ≥ t parties, including all n.
/// The result is the whole private key: whoever holds it no longer needs the MPC.
///
/// Swift arrays cannot be reliably zeroised; secret intermediates (esk_i, the AEAD key, plaintext
/// shares) go out of scope at the end of each call.
public enum DKLsExport {
    /// epk_i ‖ ct (32 + 32 + 16, dkls23.md §18).
    public static let messageSize = 80

    /// What the session layer hands every party of an export (exporters and the receiver alike).
    public struct Parameters: Sendable {
        public let keyshare: DKLsKeyshare
        /// E: the parties whose shares are combined, ascending, t ≤ #E ≤ n.
        public let exporters: [PartyIndex]
        /// ρ: the receiving party.
        public let receiver: PartyIndex
        /// rpk: the receiver's one-time X25519 public key (from the setup).
        public let receiverKey: X25519.PublicKey
        public let instanceId: [UInt8]
        public let setupHash: [UInt8]

        public init(keyshare: DKLsKeyshare, exporters: [PartyIndex], receiver: PartyIndex,
                    receiverKey: X25519.PublicKey, instanceId: [UInt8], setupHash: [UInt8]) throws(ProtocolError) {
            let sorted = Array(Set(exporters)).sorted()
            guard sorted.count == exporters.count, sorted.count >= keyshare.threshold,
                  sorted.allSatisfy({ Int($0) < keyshare.partyCount }), Int(receiver) < keyshare.partyCount,
                  sorted.contains(keyshare.partyIndex) || keyshare.partyIndex == receiver,
                  instanceId.count == 32, setupHash.count == 32
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

        /// The exporters that send a message (everyone in E except the receiver).
        var senders: [PartyIndex] { exporters.filter { $0 != receiver } }
    }

    /// key = H("export/key"; ctx, u8(i), epk_i, rpk, ss) and aad = H("export/aad"; ctx, u8(i)).
    static func keyAndAAD(context: [UInt8], exporter: PartyIndex, ephemeral: [UInt8], receiverKey: [UInt8],
                          sharedSecret: [UInt8]) -> (key: [UInt8], aad: [UInt8]) {
        (DKLsHash.h("export/key", context, [exporter], ephemeral, receiverKey, sharedSecret),
         DKLsHash.h("export/aad", context, [exporter]))
    }

    /// Step 2, at exporter i ∈ E (i ≠ ρ): encrypts s_i to rpk under a fresh ephemeral key. The single
    /// fixed nonce 0^12 is safe only because every key is used once (fresh esk_i each call).
    public static func exportShare<R: RandomNumberGenerator>(_ parameters: Parameters, using rng: inout R)
        throws(ProtocolError) -> ProtocolMessage {
        let keyshare = parameters.keyshare, i = keyshare.partyIndex
        guard parameters.senders.contains(i) else { throw .invalidInput(.invalidParameters) }
        var ephemeral: X25519.PrivateKey?
        repeat { ephemeral = try? X25519.PrivateKey(rawRepresentation: rng.randomBytes(count: 32)) } while ephemeral == nil
        guard let esk = ephemeral,
              let shared = try? esk.sharedSecret(with: parameters.receiverKey)   // all-zero result fails here
        else { throw .abort(party: nil, reason: .invalidParameters) }
        let epk = esk.publicKey.bytes
        let (key, aad) = keyAndAAD(context: parameters.context, exporter: i, ephemeral: epk,
                                   receiverKey: parameters.receiverKey.bytes, sharedSecret: shared)
        guard let ciphertext = try? ChaCha20Poly1305.seal(keyshare.share.bytes, key: key,
                                                          nonce: [UInt8](repeating: 0, count: 12), associatedData: aad)
        else { throw .abort(party: nil, reason: .invalidParameters) }
        return ProtocolMessage(tag: DKLsTag.exportShare, from: i, to: parameters.receiver, payload: epk + ciphertext)
    }

    /// Steps 3–4, at the receiver ρ (its keyshare in `parameters`, its one-time private key rsk):
    /// opens and checks every exporter's share (Abort(i) on any failure), interpolates x over E and
    /// checks x·G = P (Abort(–) otherwise).
    public static func receive(_ parameters: Parameters, privateKey receiverKey: X25519.PrivateKey,
                               messages: [ProtocolMessage]) throws(ProtocolError) -> DKLsExportedKey {
        let keyshare = parameters.keyshare, me = keyshare.partyIndex
        guard me == parameters.receiver, receiverKey.publicKey == parameters.receiverKey else {
            throw .invalidInput(.invalidParameters)
        }
        let payloads = try RoundInbox(tag: DKLsTag.exportShare, broadcast: false, receiver: me,
                                      senders: Set(parameters.senders)).collect(messages)
        let context = parameters.context
        var key = Secp256k1.Scalar.zero
        for k in parameters.exporters {
            let share: Secp256k1.Scalar
            if k == me {
                share = keyshare.share
            } else {
                share = try open(payloads[k] ?? [], from: k, context: context, receiverKey: receiverKey,
                                 expected: keyshare.publicShares[Int(k)])
            }
            key += try Lagrange.coefficient(of: k, in: parameters.exporters, points: keyshare.evaluationPoints) * share
        }
        guard Secp256k1.Point(base: key) == keyshare.publicKey else {
            throw .abort(party: nil, reason: .publicKeyMismatch)
        }
        return DKLsExportedKey(privateKey: key, chainCode: keyshare.rootChainCode)
    }

    /// One exporter's message: decrypt, decode s_k < q and check s_k·G = S_k.
    private static func open(_ payload: [UInt8], from k: PartyIndex, context: [UInt8], receiverKey: X25519.PrivateKey,
                             expected: Secp256k1.Point) throws(ProtocolError) -> Secp256k1.Scalar {
        guard payload.count == messageSize else { throw .abort(party: k, reason: .malformedMessage) }
        let epk = Array(payload[0..<32]), ciphertext = Array(payload[32..<80])
        guard let peer = try? X25519.PublicKey(bytes: epk), let shared = try? receiverKey.sharedSecret(with: peer) else {
            throw .abort(party: k, reason: .malformedMessage)   // all-zero shared secret (small-order epk)
        }
        let (key, aad) = keyAndAAD(context: context, exporter: k, ephemeral: epk,
                                   receiverKey: receiverKey.publicKey.bytes, sharedSecret: shared)
        guard let plaintext = try? ChaCha20Poly1305.open(ciphertext, key: key, nonce: [UInt8](repeating: 0, count: 12),
                                                         associatedData: aad)
        else { throw .abort(party: k, reason: .malformedMessage) }
        guard let share = try? Secp256k1.Scalar(bytes: plaintext) else { throw .abort(party: k, reason: .invalidShare) }
        guard Secp256k1.Point(base: share) == expected else { throw .abort(party: k, reason: .invalidShare) }
        return share
    }
}

/// An exported private key and its chain code (a BIP32 extended private key at the key's root).
/// `description` never shows the key.
public struct DKLsExportedKey: Sendable, Equatable {
    /// x with x·G = P (secret).
    public let privateKey: Secp256k1.Scalar
    public let chainCode: [UInt8]

    public init(privateKey: Secp256k1.Scalar, chainCode: [UInt8]) {
        self.privateKey = privateKey
        self.chainCode = chainCode
    }

    /// P = x·G.
    public var publicKey: Secp256k1.Point { Secp256k1.Point(base: privateKey) }

    /// The private key of a soft (non-hardened) BIP32 child: x + δ with δ from CKDpub, and cc′
    /// (spec §16 "exporting a soft child"). Hardened indices are refused (`invalidDerivationPath`).
    public func softChild(_ path: DerivationPath) throws(ProtocolError) -> DKLsExportedKey {
        let derived = try path.derive(publicKey: publicKey, chainCode: chainCode)
        return DKLsExportedKey(privateKey: privateKey + derived.tweak, chainCode: derived.chainCode)
    }
}

extension DKLsExportedKey: CustomStringConvertible {
    public var description: String { "DKLsExportedKey(redacted)" }
}
