import MPCCrypto

/// A party's presignature (dkls23.md §13.4 step 9): bound to the key (key id, generation), the signer set,
/// the derivation path and the nonce R; the finish needs only the message hash.
///
/// Strictly single use: `finish` takes the secrets out under a lock, so a second call — from any
/// thread — fails with `presignatureAlreadyUsed` (a second finish with another message would reveal
/// the key). Persisted copies must be deleted in the same transaction that finishes them (node side).
public final class DKLsPresignature: Sendable {
    public static let version: UInt8 = 1

    public let keyId: [UInt8]
    public let generation: [UInt8]
    /// The signing session's final session id (binds the finish messages).
    public let fsid: [UInt8]
    public let signers: [PartyIndex]
    public let partyIndex: PartyIndex
    public let pathBytes: [UInt8]
    /// P′, the (derived) public key the signature will verify under.
    public let derivedKey: Secp256k1.Point
    /// R = Σ R_k.
    public let nonce: Secp256k1.Point

    struct Secrets: Sendable {
        let phi: Secp256k1.Scalar
        let u: Secp256k1.Scalar
        let y: Secp256k1.Scalar
    }

    private let secrets: LockedValue<Secrets?>

    init(keyId: [UInt8], generation: [UInt8], fsid: [UInt8], signers: [PartyIndex], partyIndex: PartyIndex,
         pathBytes: [UInt8], derivedKey: Secp256k1.Point, nonce: Secp256k1.Point, secrets: Secrets) {
        self.keyId = keyId
        self.generation = generation
        self.fsid = fsid
        self.signers = signers
        self.partyIndex = partyIndex
        self.pathBytes = pathBytes
        self.derivedKey = derivedKey
        self.nonce = nonce
        self.secrets = LockedValue(secrets)
    }

    /// The secrets, if not consumed (for serialization; does not consume).
    func peekSecrets() -> Secrets? { secrets.withLock { $0 } }

    /// Whether `finish` has been called.
    public var isConsumed: Bool { secrets.withLock { $0 == nil } }

    /// Round 3: consumes the presignature and returns the finish broadcast fsid ‖ m ‖ w_i ‖ u_i.
    /// `keyshare` must be the one that presigned; `messageHash` exactly 32 bytes.
    public func finish(messageHash: [UInt8], keyshare: DKLsKeyshare) throws(ProtocolError)
        -> (DKLsSign.FinishState, ProtocolMessage) {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidMessageHash) }
        guard keyshare.keyId == keyId, keyshare.generation == generation, keyshare.partyIndex == partyIndex else {
            throw .invalidInput(.presignatureMismatch)
        }
        return try finish(messageHash: messageHash)
    }

    /// Round 3 for a presignature restored from storage whose binding to the current keyshare (key id,
    /// generation, party) the caller checked when it stored and loaded it (session.md §8.2–8.3: the
    /// stored row is authenticated with key id and generation, and its generation must be current).
    /// Consumes the presignature like `finish(messageHash:keyshare:)`.
    public func finish(messageHash: [UInt8]) throws(ProtocolError) -> (DKLsSign.FinishState, ProtocolMessage) {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidMessageHash) }
        guard let taken = secrets.withLock({ value -> Secrets? in
            let current = value
            value = nil
            return current
        }) else { throw .invalidInput(.presignatureAlreadyUsed) }
        guard let encodedR = try? nonce.compressed(), let rx = try? Secp256k1.Scalar(reducing: encodedR[1...]) else {
            throw .abort(party: nil, reason: .identityPoint)
        }
        let e = (try? Secp256k1.Scalar(reducing: messageHash)) ?? .zero
        let w = e * taken.phi + rx * taken.y
        let payload = fsid + messageHash + w.bytes + taken.u.bytes
        let state = DKLsSign.FinishState(fsid: fsid, messageHash: messageHash, signers: signers, partyIndex: partyIndex,
                                         derivedKey: derivedKey, nonce: nonce, ownW: w, ownU: taken.u)
        return (state, ProtocolMessage(tag: DKLsTag.signFinish, from: partyIndex, to: nil, payload: payload))
    }
}

extension DKLsPresignature: CustomStringConvertible {
    public var description: String {
        "DKLsPresignature(party \(partyIndex), signers \(signers), keyId \(Hex.encode(keyId)), consumed: \(isConsumed))"
    }
}
