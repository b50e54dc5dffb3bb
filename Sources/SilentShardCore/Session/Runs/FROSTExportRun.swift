import Foundation
import MPCCrypto
import MPCProtocols

/// FROST export (sealed, like DKLs23's `dkls23.md` §16): every exporter sends its share encrypted to the
/// receiver's one-time X25519 key; the receiver (the app, party 0) opens them, checks each against its
/// verifying share, interpolates and checks the key.
package enum FROSTExportRun {
    /// The one tag an export carries.
    package static let receivableTags: Set<UInt16> = [FROST.MessageTag.exportShare.rawValue]

    /// An exporter's states: its share goes out in its one step.
    fileprivate enum SenderState: Sendable { case ready, sent }
    /// The receiver's states: it sends nothing, waits for every exporter's share, opens them.
    fileprivate enum ReceiverState: Sendable { case ready, awaitingShares, finished }

    /// An exporter (a node): its encrypted share goes out in the first round and the run ends.
    package struct Sender: SessionRun {
        package static var receivableTags: Set<UInt16> { FROSTExportRun.receivableTags }
        package private(set) var progress: RunProgress<ExportShareSent>
        private var state: SenderState = .ready
        private let parameters: FROST.Export.Sealed.Parameters

        /// The exporter `keyshare.party` among `participants`, sending to `receiverKey`.
        package init(keyshare: FROST.Keyshare, participants: [PartyIndex], receiverKey: X25519.PublicKey,
                     instanceID: InstanceID, setupHash: SetupHash) throws(ProtocolError) {
            parameters = try FROST.Export.Sealed.Parameters(keyshare: keyshare, exporters: participants, receiver: 0,
                                                            receiverKey: receiverKey, instanceId: instanceID.bytes,
                                                            setupHash: setupHash.bytes)
            progress = RunProgress(local: keyshare.party, participants: participants)
        }

        package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            guard local != parameters.receiver, case .ready = state else { throw .invalidInput(.invalidParameters) }
            let payload = try FROST.Export.Sealed.exportShare(parameters, using: &rng)
            state = .sent
            progress.finish(ExportShareSent())
            return [ProtocolMessage(tag: FROST.MessageTag.exportShare.rawValue, from: local, to: parameters.receiver,
                                    payload: payload)]
        }

        package mutating func advance(_ messages: [ProtocolMessage],
                                      using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            try progress.check(messages)
            throw .invalidInput(.invalidParameters)
        }
    }

    /// The receiver (the app, party 0): waits for every exporter's share and rebuilds the root key, or its soft
    /// child at a path (`docs/protocol/frost.md` §11: the scalar x + δ, the child chain code and PK′).
    package struct Receiver: SessionRun {
        package static var receivableTags: Set<UInt16> { FROSTExportRun.receivableTags }
        package private(set) var progress: RunProgress<ExportedKey>
        private let parameters: FROST.Export.Sealed.Parameters
        private let oneTimeKey: X25519.PrivateKey
        private let path: [UInt32]
        private let chainPath: String
        private var state: ReceiverState = .ready

        /// The receiver `keyshare.party` (0) of the shares of `participants`, opened with `oneTimeKey`; the key at
        /// the soft `chainPath` ("m": the root; hardened or bad syntax: `invalidDerivationPath`).
        package init(keyshare: FROST.Keyshare, participants: [PartyIndex], oneTimeKey: X25519.PrivateKey,
                     instanceID: InstanceID, setupHash: SetupHash, chainPath: String = "m") throws(ProtocolError) {
            parameters = try FROST.Export.Sealed.Parameters(keyshare: keyshare, exporters: participants, receiver: 0,
                                                            receiverKey: oneTimeKey.publicKey, instanceId: instanceID.bytes,
                                                            setupHash: setupHash.bytes)
            path = try DerivationPath(chainPath).indices
            self.chainPath = chainPath
            self.oneTimeKey = oneTimeKey
            progress = RunProgress(local: keyshare.party, participants: participants)
        }

        package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            guard local == parameters.receiver, case .ready = state else { throw .invalidInput(.invalidParameters) }
            state = .awaitingShares
            progress.expect([FROST.MessageTag.exportShare.rawValue])
            return []
        }

        package mutating func advance(_ messages: [ProtocolMessage],
                                      using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
            try progress.check(messages)
            guard case .awaitingShares = state else { throw .invalidInput(.invalidParameters) }
            var sealed: [PartyIndex: [UInt8]] = [:]
            for (from, payload) in RunProgress<ExportedKey>.payloads(messages, tag: FROST.MessageTag.exportShare.rawValue) {
                sealed[from] = payload
            }
            let root = try FROST.Export.Sealed.receive(parameters, privateKey: oneTimeKey, messages: sealed)
            let keyshare = parameters.keyshare
            var parts = (privateKey: root, chainCode: keyshare.chainCode, publicKey: keyshare.publicKey)
            if !path.isEmpty {
                let derivation = try FROST.Derivation(publicKey: keyshare.publicKey, chainCode: keyshare.chainCode, path: path)
                parts = (root + derivation.tweak, derivation.chainCode, derivation.publicKey)
            }
            guard let key = try? ExportedKey(algorithm: .eddsa, privateKey: Data(parts.privateKey.bytes),
                                             chainCode: Data(parts.chainCode), publicKey: Data(parts.publicKey.bytes),
                                             keyId: Hex.encode(keyshare.keyId), chainPath: chainPath)
            else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            state = .finished
            progress.finish(key)
            return []
        }
    }
}
