import MPCCrypto

@_spi(InProcess)
extension DKLsInProcess {
    /// A whole hard derivation among `keyshares` (the participants, ascending party index). Returns each
    /// participant's child keyshare, in the same order; `tamper(1, …)` may rewrite the broadcasts.
    public static func hardDerive<R: RandomNumberGenerator>(
        _ keyshares: [DKLsKeyshare], path: DerivationPath, using rng: inout R,
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> [DKLsKeyshare] {
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        let participants = keyshares.map(\.partyIndex)
        var states: [DKLsHardDerivation.State] = [], sent: [ProtocolMessage] = []
        for keyshare in keyshares {
            let parameters = try DKLsHardDerivation.Parameters(keyshare: keyshare, participants: participants,
                                                               instanceId: instance, setupHash: setup, path: path)
            let (state, message) = try DKLsHardDerivation.start(parameters, using: &rng)
            states.append(state)
            sent.append(message)
        }
        sent.forEach(observe)
        sent = tamper(1, sent)
        var children: [DKLsKeyshare] = []
        for (position, state) in states.enumerated() {
            children.append(try state.finish(inbox(of: participants[position], sent)))
        }
        return children
    }

    /// A whole export: `receiver` is the receiving party's keyshare, `exporters` the keyshares of the
    /// other members of E (the receiver's own share is combined when `receiverInSet`). `tamper(1, …)`
    /// may rewrite the P2P messages.
    public static func export<R: RandomNumberGenerator>(
        receiver: DKLsKeyshare, exporters: [DKLsKeyshare], receiverInSet: Bool, using rng: inout R,
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> DKLsExportedKey {
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        var oneTime: X25519.PrivateKey?
        repeat { oneTime = try? X25519.PrivateKey(rawRepresentation: rng.randomBytes(count: 32)) } while oneTime == nil
        guard let receiverKey = oneTime else { throw .invalidInput(.invalidParameters) }
        let set = (exporters.map(\.partyIndex) + (receiverInSet ? [receiver.partyIndex] : [])).sorted()
        var sent: [ProtocolMessage] = []
        for keyshare in exporters {
            let parameters = try DKLsExport.Parameters(keyshare: keyshare, exporters: set, receiver: receiver.partyIndex,
                                                       receiverKey: receiverKey.publicKey, instanceId: instance,
                                                       setupHash: setup)
            sent.append(try DKLsExport.exportShare(parameters, using: &rng))
        }
        sent.forEach(observe)
        sent = tamper(1, sent)
        let parameters = try DKLsExport.Parameters(keyshare: receiver, exporters: set, receiver: receiver.partyIndex,
                                                   receiverKey: receiverKey.publicKey, instanceId: instance,
                                                   setupHash: setup)
        return try DKLsExport.receive(parameters, privateKey: receiverKey,
                                      messages: inbox(of: receiver.partyIndex, sent))
    }
}
