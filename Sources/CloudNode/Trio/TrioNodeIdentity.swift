import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Who a trio node is (`docs/protocol/session.md` §1.2–1.3): its role (A = party 1, the entry point and
/// relay; B = party 2), its Ed25519 node key, the certificate the offline cluster key issued for it,
/// and the cluster key itself (= the app's `cloudVerifyingKey`, and what it checks its peer's
/// certificate against).
package struct TrioNodeIdentity: Sendable {
    package let nodeKey: Ed25519.SigningKey
    package let certificate: NodeCertificate
    package let clusterKey: Ed25519.VerifyingKey

    /// Fails with `invalidConfiguration` unless the certificate is a trio role's, certifies
    /// `nodeKey`, and verifies under `clusterKey` now.
    package init(nodeKey: Ed25519.SigningKey, certificate: NodeCertificate, clusterKey: Ed25519.VerifyingKey,
                nowSeconds: UInt64 = UInt64(Date().timeIntervalSince1970)) throws(SilentShardError) {
        guard certificate.role != .duo, certificate.nodeKey == nodeKey.verifyingKey else {
            throw .invalidConfiguration(reason: "the certificate is not a trio certificate for this node key")
        }
        do {
            try certificate.verify(issuer: clusterKey, senderIndex: certificate.role.partyIndex, mode: .trio,
                                   nowSeconds: nowSeconds)
        } catch { throw .invalidConfiguration(reason: "the certificate does not verify under the cluster key") }
        self.nodeKey = nodeKey
        self.certificate = certificate
        self.clusterKey = clusterKey
    }

    /// This node's party index (1 for A, 2 for B).
    package var index: PartyIndex { certificate.role.partyIndex }
    /// The other node's party index.
    package var peerIndex: PartyIndex { index == 1 ? 2 : 1 }
    /// The 16-byte group id of this A/B pair.
    package var groupID: [UInt8] { certificate.groupID }
    /// Whether this is node A (the entry point).
    package var isEntry: Bool { certificate.role == .trioA }
}

/// How node A reaches node B: one call opens one link (`docs/protocol/session.md` §2.3: one per app
/// session). In process, tests hand B's runner the other end of a pipe; over the network it is a
/// WebSocket to B's `/v3/peer` (`WebSocketPeerConnector`).
package protocol TrioPeerConnector: Sendable {
    /// Opens a fresh link to the other node; a failure makes A answer REJECT(PEER_UNAVAILABLE).
    func openLink() async throws -> any NodeStepConnection
}

/// LINK_OPEN (session.md §2.3, §4.7): the first frame on an inter-node link, signed by the opener's node key
/// (label `link`) and carrying its certificate.
enum TrioLink {
    /// A's LINK_OPEN for an app session. `clientAddress`: the app's address as A's limits count it
    /// (session.md §4.7 field 0x06, under A's signature), so B counts a shared subject per client, not
    /// once for everyone (second review finding 5); nil or unusable text (over 64 bytes, not printable
    /// ASCII) is left out.
    static func openFrame(identity: TrioNodeIdentity, setup: ValidatedSetup, token: [UInt8]?, now: UInt64,
                          clientAddress: String? = nil) -> Frame {
        let payload = LinkOpenPayload(certificate: identity.certificate, purpose: .session, mode: setup.mode,
                                      algorithm: setup.algorithm, operation: setup.operation, token: token,
                                      timestamp: now, clientAddress: linkAddress(clientAddress)).encoded()
        let header = FrameHeader(kind: .linkOpen, sender: identity.index, receiver: identity.peerIndex,
                                 length: UInt32(payload.count), instanceID: setup.instanceID)
        return Frame.signed(header: header, payload: payload, key: identity.nodeKey)
    }

    /// A's LINK_OPEN for a relayed preSignFinal (purpose 2): `instance_id` = presig_id.
    static func preSignFinalOpenFrame(identity: TrioNodeIdentity, presigID: InstanceID, algorithm: SessionAlgorithm,
                                      token: [UInt8]?, now: UInt64) -> Frame {
        let payload = LinkOpenPayload(certificate: identity.certificate, purpose: .preSignFinal, mode: .trio,
                                      algorithm: algorithm, operation: .preSignFinal, token: token,
                                      timestamp: now, clientAddress: nil,
                                      nonce: SecureRandom.bytes(count: LinkOpenPayload.nonceByteCount)).encoded()
        let header = FrameHeader(kind: .linkOpen, sender: identity.index, receiver: identity.peerIndex,
                                 length: UInt32(payload.count), instanceID: presigID)
        return Frame.signed(header: header, payload: payload, key: identity.nodeKey)
    }

    /// `address` as LINK_OPEN's client address field: ≤ 64 printable ASCII bytes, else nil.
    static func linkAddress(_ address: String?) -> [UInt8]? {
        guard let bytes = address.map({ Array($0.utf8) }), !bytes.isEmpty,
              bytes.count <= SessionConstants.maximumClientAddressByteCount, bytes.allSatisfy({ (0x20...0x7E).contains($0) })
        else { return nil }
        return bytes
    }

    /// What an accepted LINK_OPEN says.
    struct Opened: Sendable {
        let instanceID: InstanceID
        let payload: LinkOpenPayload
        let mode: SessionMode
        let algorithm: SessionAlgorithm
        let operation: SessionOperation
        /// The hash of the signed LINK_OPEN frame: the key B's replay store keeps for a preSignFinal link.
        let replayID: InstanceID
    }

    /// The acceptor's checks of session.md §2.3: one LINK_OPEN frame from the other role to this node, a
    /// certificate valid under the cluster key for the other role and this group, its key's signature,
    /// the timestamp window, purpose session, a known route. Any failure is `cloudVerificationFailed`
    /// or `malformedMessage` (the link is then closed; A reports PEER_UNAVAILABLE).
    static func accept(_ message: [UInt8], identity: TrioNodeIdentity, replay: ReplayWindow,
                       now: UInt64) throws(SilentShardError) -> Opened {
        let frames: [Frame]
        do { frames = try Frame.parseBundle(message) } catch { throw SilentShardError(error) }
        guard frames.count == 1, let frame = frames.first, frame.header.kind == .linkOpen,
              frame.header.sender == identity.peerIndex, frame.header.receiver == identity.index
        else { throw .malformedMessage(party: .node(identity.peerIndex)) }
        let payload: LinkOpenPayload
        do { payload = try LinkOpenPayload(bytes: frame.body) } catch { throw SilentShardError(error) }
        let certificate = payload.certificate
        do {
            try certificate.verify(issuer: identity.clusterKey, senderIndex: identity.peerIndex, mode: .trio,
                                   nowSeconds: now / 1000)
        } catch { throw SilentShardError(error) }
        guard certificate.groupID == identity.groupID, certificate.nodeKey != identity.nodeKey.verifyingKey else {
            throw .cloudVerificationFailed(reason: "peer certificate of another group")
        }
        guard frame.hasValidSignature(by: certificate.nodeKey) else {
            throw .cloudVerificationFailed(reason: "link signature")
        }
        guard replay.isFresh(timestamp: payload.timestamp, now: now) else { throw .clockSkew(nodeTime: now) }
        guard payload.purpose == .session || payload.purpose == .preSignFinal, payload.route.count == 3,
              let mode = SessionMode(rawValue: payload.route[0]), mode == .trio,
              let algorithm = SessionAlgorithm(rawValue: payload.route[1]),
              let operation = SessionOperation(rawValue: payload.route[2])
        else { throw .invalidInput(reason: "link purpose or route") }
        // A relayed preSignFinal names that operation; a session link any other.
        guard (payload.purpose == .preSignFinal) == (operation == .preSignFinal) else {
            throw .invalidInput(reason: "link purpose or route")
        }
        // A preSignFinal link's instance_id (the presignature's) repeats on every retry: its nonce makes the frame
        // unique, and the frame's hash is what B's replay store keeps (security review 2, finding 14).
        guard payload.purpose != .preSignFinal || payload.nonce != nil else {
            throw .invalidInput(reason: "link nonce")
        }
        return Opened(instanceID: frame.header.instanceID, payload: payload, mode: mode, algorithm: algorithm,
                      operation: operation, replayID: InstanceID(checked: SHA256.hash(Array("silentshard/link-open\u{0}".utf8) + frame.encoded())))
    }
}
