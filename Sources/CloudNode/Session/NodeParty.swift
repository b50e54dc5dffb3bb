import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Who a node is in its sessions (`docs/protocol/session.md` §1.2–1.3): what differs between duo's node and
/// trio's nodes A and B at the wire — party index, signing key and certificate, the key frames from
/// nodes are trusted under, the group, and which operations it serves. Everything else of a step is
/// the same ``NodeStepRunner`` code.
package enum NodeParty: Sendable {
    /// Duo's node: party 1; its own public key is the app's `cloudVerifyingKey`, it has no certificate.
    case duo(nodeKey: Ed25519.SigningKey)
    /// A trio node: A (party 1, the app's entry point and B's relay) or B (party 2).
    case trio(TrioNodeIdentity)

    /// Operations a duo node serves as WebSocket steps (the operation table's duo rows).
    static let duoOperations = OperationTable.webSocketOperations(in: .duo)
    /// Operations a trio node serves as WebSocket steps (the operation table's trio rows).
    static let trioOperations = OperationTable.webSocketOperations(in: .trio)

    package var mode: SessionMode {
        switch self {
        case .duo: .duo
        case .trio: .trio
        }
    }

    package var index: PartyIndex {
        switch self {
        case .duo: 1
        case .trio(let identity): identity.index
        }
    }

    package var nodeKey: Ed25519.SigningKey {
        switch self {
        case .duo(let nodeKey): nodeKey
        case .trio(let identity): identity.nodeKey
        }
    }

    /// The trio identity (nil in duo).
    package var trioIdentity: TrioNodeIdentity? {
        if case .trio(let identity) = self { return identity }
        return nil
    }

    /// The certificate this node's ACCEPTs and REJECTs carry (trio; nil in duo).
    var certificate: NodeCertificate? { trioIdentity?.certificate }

    /// The key node frames are trusted under: duo's own node key (= the app's `cloudVerifyingKey`), trio's
    /// cluster key.
    var trustedKey: Ed25519.VerifyingKey {
        switch self {
        case .duo(let nodeKey): nodeKey.verifyingKey
        case .trio(let identity): identity.clusterKey
        }
    }

    /// The trio group id (nil in duo).
    var groupID: [UInt8]? { trioIdentity?.groupID }

    /// Whether apps connect here: duo's node and trio's A (B is reached over A's link only).
    var servesApps: Bool { trioIdentity?.isEntry ?? true }

    var servedOperations: Set<SessionOperation> { mode == .duo ? Self.duoOperations : Self.trioOperations }

    /// The other node that takes part in share commits (trio), whose READY is awaited.
    var otherNode: PartyIndex? { trioIdentity?.peerIndex }

    /// How frames from nodes are authenticated at `now` (ms).
    func trust(now: UInt64) -> FrameReceiver.NodeTrust {
        FrameReceiver.NodeTrust(cloudKey: trustedKey, nowSeconds: now / 1000, recordedGroupID: groupID)
    }

    /// The party of the protocol run this node makes.
    var runParty: NodeProtocolRun.Party { .init(index: index, mode: mode, groupID: groupID) }

    /// The label of this node in decision and ban records.
    var recordLabel: String { "node \(index)" }
}
