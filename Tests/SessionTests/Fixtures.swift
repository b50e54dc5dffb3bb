import Foundation
import MPCCrypto
import MPCProtocols
@testable import CloudNode
@testable import SilentShardCore

/// Shared values for the session tests: a duo or trio cluster with fixed keys and a fixed clock.
struct Cluster {
    static let now: UInt64 = 1_800_000_000_000   // ms
    static var nowSeconds: UInt64 { now / 1000 }

    let mode: SessionMode
    let cloudKey = Ed25519.SigningKey()        // duo node key / trio cluster key
    let nodeA = Ed25519.SigningKey()
    let nodeB = Ed25519.SigningKey()
    let groupID = SecureRandom.bytes(count: 16)
    let device: any MessageSigner

    init(mode: SessionMode, device: any MessageSigner = SoftwareEd25519MessageSigner()) {
        self.mode = mode
        self.device = device
    }

    func nodeKey(_ party: PartyIndex) -> Ed25519.SigningKey {
        mode == .duo ? cloudKey : (party == 1 ? nodeA : nodeB)
    }

    func certificate(_ party: PartyIndex) -> NodeCertificate? {
        guard mode == .trio else { return nil }
        return NodeCertificate(role: party == 1 ? .trioA : .trioB, groupID: groupID,
                               nodeKey: nodeKey(party).verifyingKey, notBefore: Self.nowSeconds - 86_400,
                               notAfter: Self.nowSeconds + 29 * 86_400, serial: UInt64(party), issuer: cloudKey)
    }

    var trust: FrameReceiver.NodeTrust {
        FrameReceiver.NodeTrust(cloudKey: cloudKey.verifyingKey, nowSeconds: Self.nowSeconds)
    }

    /// A SETUP payload for `operation` with the fields the operation requires.
    func setupPayload(_ operation: SessionOperation, algorithm: SessionAlgorithm = .ecdsa,
                      appKeys: SessionKeyPair?, participants: [PartyIndex]? = nil,
                      timestamp: UInt64 = Cluster.now) throws -> SetupPayload {
        let parties = participants ?? (operation == .sign || operation == .preSign ? [0, 1] : mode.allParties.parties)
        var payload = SetupPayload(mode: mode, algorithm: algorithm, operation: operation, timestamp: timestamp,
                                   deviceKey: try DeviceKey(signer: device), sessionKeys: appKeys?.publicKeys,
                                   cloudKey: cloudKey.verifyingKey.bytes, participants: PartySet(parties))
        let keyID = KeyID(checked: [UInt8](repeating: 0x11, count: 32))
        let gen = Generation(checked: [UInt8](repeating: 0x22, count: 32))
        typealias T = SetupPayload.Tag
        for (tag, presence) in SetupFieldRules.presence(operation, mode: mode) where presence == .required {
            switch tag {
            case T.keyID: payload.keyID = keyID
            case T.gen: payload.gen = gen
            case T.groupID: payload.groupID = groupID
            case T.path: payload.path = DerivationPathBytes(indices: operation == .hardDerivation ? [0x8000_0001] : [0, 1]).encoded
            case T.message: payload.message = algorithm == .ecdsa ? [UInt8](repeating: 7, count: 32) : Array("hello".utf8)
            case T.publicKey:
                payload.publicKey = algorithm == .ecdsa
                    ? try Secp256k1.Point(base: Secp256k1.Scalar(bytes: [UInt8](repeating: 0, count: 31) + [5])).compressed()
                    : Ed25519.SigningKey().verifyingKey.bytes
            case T.chainCode: payload.chainCode = ChainCode(checked: [UInt8](repeating: 0x33, count: 32))
            case T.exportKey: payload.exportKey = X25519.PrivateKey().publicKey.bytes
            case T.appState: payload.appState = AppState(currentGen: gen, staged: nil).encoded
            case T.holders: payload.holders = PartySet([1, 2]).encoded
            default: break
            }
        }
        return payload
    }

    func setupFrame(_ payload: SetupPayload, instanceID: InstanceID = .random(),
                    exportPost: Bool = false) async throws -> Frame {
        try await payload.signedFrame(instanceID: instanceID, signer: device, exportPost: exportPost)
    }

    func context(_ operation: SessionOperation, algorithm: SessionAlgorithm = .ecdsa, params: String?,
                 nodeIndex: PartyIndex = 1, exportPost: Bool = false) -> SetupValidationContext {
        SetupValidationContext(token: .accepted, mode: mode, algorithm: algorithm, operation: operation, params: params,
                               nodeIndex: nodeIndex, cloudKey: cloudKey.verifyingKey.bytes,
                               groupID: mode == .trio ? groupID : nil, isExportPost: exportPost, now: Self.now)
    }

    /// A node's signed ACCEPT.
    func accept(from party: PartyIndex, setupHash: SetupHash, instanceID: InstanceID, keys: SessionKeyPair,
                keyStatus: KeyStatus? = nil) -> Frame {
        let payload = AcceptPayload(setupHash: setupHash, nodeKey: nodeKey(party).verifyingKey,
                                    certificate: certificate(party), sessionKeys: keys.publicKeys,
                                    nodeTime: Self.now, keyStatus: keyStatus).encoded()
        let header = FrameHeader(kind: .accept, sender: party, receiver: 0xFF, seq: 0,
                                 length: UInt32(payload.count), instanceID: instanceID)
        return Frame.signed(header: header, payload: payload, key: nodeKey(party))
    }
}

/// A session-key-signed frame.
func sessionFrame(_ kind: FrameKind, from sender: PartyIndex, to receiver: PartyIndex = 0xFF, tag: UInt16 = 0,
                  seq: UInt32, payload: [UInt8], instanceID: InstanceID, keys: SessionKeyPair) -> Frame {
    let header = FrameHeader(kind: kind, sender: sender, receiver: receiver, tag: tag, seq: seq,
                             length: UInt32(payload.count), instanceID: instanceID)
    return Frame.signed(header: header, payload: payload, key: keys.signingKey)
}

extension SessionError {
    var wire: WireCode? { code }
}

extension SetupHash {
    /// A random setup hash, for tests that need one not bound to any SETUP.
    static func random() -> SetupHash { SetupHash(checked: SecureRandom.bytes(count: byteCount)) }
}
