import Foundation
import MPCCrypto
import MPCProtocols

/// DKLs23 export (`dkls23.md` §16): every exporter sends its share encrypted to the receiver's one-time
/// X25519 key; the receiver (the app, party 0) opens them, checks each against its public share,
/// interpolates and checks x·G = P.
package enum DKLsExportRun {
    /// The one tag an export carries.
    package static let receivableTags: Set<UInt16> = [DKLsTag.exportShare]

    /// An exporter's states: its share goes out in its one step.
    fileprivate enum SenderState: Sendable { case ready, sent }
    /// The receiver's states: it sends nothing, waits for every exporter's share, opens them.
    fileprivate enum ReceiverState: Sendable { case ready, awaitingShares, finished }

    /// An exporter (a node): its encrypted share goes out in the first round and the run ends.
    package struct Sender: SessionRun {
        package static var receivableTags: Set<UInt16> { DKLsExportRun.receivableTags }
        package private(set) var progress: RunProgress<ExportShareSent>
        private var state: SenderState = .ready
        private let parameters: DKLsExport.Parameters

        /// The exporter `keyshare.partyIndex` among `participants`, sending to `receiverKey`.
        package init(keyshare: DKLsKeyshare, participants: [PartyIndex], receiverKey: X25519.PublicKey,
                     instanceID: InstanceID, setupHash: SetupHash) throws(ProtocolError) {
            parameters = try DKLsExport.Parameters(keyshare: keyshare, exporters: participants, receiver: 0,
                                                   receiverKey: receiverKey, instanceId: instanceID.bytes,
                                                   setupHash: setupHash.bytes)
            progress = RunProgress(local: keyshare.partyIndex, participants: participants)
        }

        package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            guard local != parameters.receiver, case .ready = state else { throw .invalidInput(.invalidParameters) }
            let message = try DKLsExport.exportShare(parameters, using: &rng)
            state = .sent
            progress.finish(ExportShareSent())
            return [message]
        }

        package mutating func advance(_ messages: [ProtocolMessage],
                                      using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            try progress.check(messages)
            throw .invalidInput(.invalidParameters)
        }
    }

    /// The receiver (the app, party 0): waits for every exporter's share and rebuilds the root key, or its soft
    /// child at a path (`docs/protocol/dkls23.md` §16 "exporting a soft child": x + δ and cc′).
    package struct Receiver: SessionRun {
        package static var receivableTags: Set<UInt16> { DKLsExportRun.receivableTags }
        package private(set) var progress: RunProgress<ExportedKey>
        private let parameters: DKLsExport.Parameters
        private let oneTimeKey: X25519.PrivateKey
        private let path: DerivationPath
        private let chainPath: String
        private var state: ReceiverState = .ready

        /// The receiver `keyshare.partyIndex` (0) of the shares of `participants`, opened with `oneTimeKey`; the
        /// key at the soft `chainPath` ("m": the root; hardened or bad syntax: `invalidDerivationPath`).
        package init(keyshare: DKLsKeyshare, participants: [PartyIndex], oneTimeKey: X25519.PrivateKey,
                     instanceID: InstanceID, setupHash: SetupHash, chainPath: String = "m") throws(ProtocolError) {
            parameters = try DKLsExport.Parameters(keyshare: keyshare, exporters: participants, receiver: 0,
                                                   receiverKey: oneTimeKey.publicKey, instanceId: instanceID.bytes,
                                                   setupHash: setupHash.bytes)
            path = try DerivationPath(chainPath)
            self.chainPath = chainPath
            self.oneTimeKey = oneTimeKey
            progress = RunProgress(local: keyshare.partyIndex, participants: participants)
        }

        package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            guard local == parameters.receiver, case .ready = state else { throw .invalidInput(.invalidParameters) }
            state = .awaitingShares
            progress.expect([DKLsTag.exportShare])
            return []
        }

        package mutating func advance(_ messages: [ProtocolMessage],
                                      using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            try progress.check(messages)
            guard case .awaitingShares = state else { throw .invalidInput(.invalidParameters) }
            let root = try DKLsExport.receive(parameters, privateKey: oneTimeKey, messages: messages)
            let keyshare = parameters.keyshare
            let child = path.indices.isEmpty ? root : try root.softChild(path)
            guard let publicKey = try? (path.indices.isEmpty ? keyshare.publicKey : child.publicKey).compressed(),
                  let key = try? ExportedKey(algorithm: .ecdsa, privateKey: Data(child.privateKey.bytes),
                                             chainCode: Data(child.chainCode), publicKey: Data(publicKey),
                                             keyId: Hex.encode(keyshare.keyId), chainPath: chainPath)
            else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            state = .finished
            progress.finish(key)
            return []
        }
    }
}
