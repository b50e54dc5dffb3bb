import MPCCrypto
import SilentShardCore
@_spi(InProcess) import MPCProtocols

/// DKLs23 key lifecycle (seeded, every party in this process): xpub export, hard derivation and export,
/// for independent checks by bip-utils and eth-keys.
enum DKLsLifecycleOperations {
    private static func keygen(_ input: CaseInput, rng: inout DeterministicRandom) throws -> [DKLsKeyshare] {
        let n = try input.int("n", in: 2...7)
        let t = try input.int("t", in: 2...n)
        return try DKLsInProcess.keygen(partyCount: n, threshold: t, using: &rng)
    }

    private static func signature(_ signature: Secp256k1.ECDSASignature) -> JSONValue {
        .object(["r": .hex(signature.r), "s": .hex(signature.s), "v": .int(Int(signature.recoveryId))])
    }

    /// `{n, t, seed, paths: [soft path]}` → the keyshare's root xpub and one `{path, xpub}` per path
    /// (`DKLsBIP32.deriveChildPublicKey`).
    static func xpub(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let keyshares = try keygen(input, rng: &rng)
        guard case .array(let paths)? = input.value["paths"] else { throw InteropError.missingField("paths") }
        var children: [JSONValue] = []
        for case .string(let text) in paths {
            let child = try DKLsBIP32.deriveChildPublicKey(keyshare: keyshares[keyshares.count - 1],
                                                           path: DerivationPath(text))
            children.append(.object(["path": .string(text), "xpub": .string(child.base58)]))
        }
        return .object([
            "publicKey": .hex(try keyshares[0].publicKey.compressed()),
            "chainCode": .hex(keyshares[0].rootChainCode),
            "xpub": .string(try DKLsBIP32.rootPublicKey(keyshare: keyshares[0]).base58),
            "children": .array(children),
        ])
    }

    /// `{n, t, seed, network: "mainnet"|"testnet", paths: [path]}` → the SDK's `Keyshare.extendedPublicKey`
    /// of every party's share (which must agree) at the root and at each path; a path it refuses (a
    /// hardened index) gives `{path, error}`.
    static func sdkXpub(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let protocolShares = try keygen(input, rng: &rng)
        let mode: Keyshare.Mode = protocolShares.count == 2 ? .duo : .trio
        let group: [UInt8]? = mode == .trio ? [UInt8](repeating: 0x47, count: 16) : nil
        let shares = try protocolShares.map { try Keyshare(dkls: $0, mode: mode, groupId: group) }
        let network: BIP32Network
        switch try input.string("network") {
        case "mainnet": network = .mainnet
        case "testnet": network = .testnet
        default: throw InteropError.wrongType(field: "network", expected: "mainnet or testnet")
        }
        func xpub(_ path: String) throws -> String {
            let all = try shares.map { try $0.extendedPublicKey(network: network, path: path) }
            guard Set(all).count == 1, let first = all.first else { throw InteropError.badRequest("parties disagree on \(path)") }
            return first
        }
        guard case .array(let paths)? = input.value["paths"] else { throw InteropError.missingField("paths") }
        var children: [JSONValue] = []
        for case .string(let text) in paths {
            do {
                children.append(.object(["path": .string(text), "xpub": .string(try xpub(text))]))
            } catch let error as SilentShardError {
                children.append(.object(["path": .string(text), "error": .string("\(error)")]))
            }
        }
        return .object([
            "publicKey": .hex([UInt8](shares[0].publicKey)),
            "chainCode": .hex([UInt8](shares[0].rootChainCode)),
            "xpub": .string(try xpub("m")),
            "children": .array(children),
        ])
    }

    /// `{n, t, seed, participants, signers ⊆ participants, softPath, hardPath, belowPath, hash}` →
    /// signatures of `hash` under the soft child (softPath), the hard child (hardPath, derived among
    /// `participants`) and a soft child of the hard child (belowPath); and the exports (receiver =
    /// signers[0], E = signers) of the root key and of the hard child.
    static func lifecycle(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let keyshares = try keygen(input, rng: &rng)
        let n = keyshares.count
        let participants = try input.ints("participants", in: 0...(n - 1)).map { PartyIndex($0) }
        let signers = try input.ints("signers", in: 0...(n - 1)).map { PartyIndex($0) }
        guard !signers.isEmpty, signers.allSatisfy(participants.contains) else {
            throw InteropError.outOfRange(field: "signers")
        }
        let hash = try input.bytes("hash")
        let softPath = try DerivationPath(input.string("softPath"))
        let hardPath = try DerivationPath(input.string("hardPath"), allowHardened: true)
        let belowPath = try DerivationPath(input.string("belowPath"))

        let chosen = signers.map { keyshares[Int($0)] }
        let soft = try DKLsBIP32.deriveChildPublicKey(keyshare: keyshares[0], path: softPath)
        let softSignature = try DKLsInProcess.sign(chosen, messageHash: hash, path: softPath, using: &rng)

        let children = try DKLsInProcess.hardDerive(participants.map { keyshares[Int($0)] }, path: hardPath, using: &rng)
        let chosenChildren = try signers.map { signer throws -> DKLsKeyshare in
            guard let child = children.first(where: { $0.partyIndex == signer }) else {
                throw InteropError.outOfRange(field: "signers")
            }
            return child
        }
        let hardSignature = try DKLsInProcess.sign(chosenChildren, messageHash: hash, using: &rng)
        let below = try DKLsBIP32.deriveChildPublicKey(keyshare: chosenChildren[0], path: belowPath)
        let belowSignature = try DKLsInProcess.sign(chosenChildren, messageHash: hash, path: belowPath, using: &rng)

        let exported = try DKLsInProcess.export(receiver: chosen[0], exporters: Array(chosen.dropFirst()),
                                                receiverInSet: true, using: &rng)
        let exportedChild = try DKLsInProcess.export(receiver: chosenChildren[0], exporters: Array(chosenChildren.dropFirst()),
                                                     receiverInSet: true, using: &rng)
        return .object([
            "publicKey": .hex(try keyshares[0].publicKey.compressed()),
            "chainCode": .hex(keyshares[0].rootChainCode),
            "soft": .object(["publicKey": .hex(try soft.publicKey.compressed()), "xpub": .string(soft.base58),
                             "signature": signature(softSignature)]),
            "hard": .object(["publicKey": .hex(try chosenChildren[0].publicKey.compressed()),
                             "chainCode": .hex(chosenChildren[0].rootChainCode),
                             "signature": signature(hardSignature)]),
            "below": .object(["publicKey": .hex(try below.publicKey.compressed()), "signature": signature(belowSignature)]),
            // Test tooling only: exported private keys.
            "export": .object(["privateKey": .hex(exported.privateKey.bytes), "chainCode": .hex(exported.chainCode),
                               "softPrivateKey": .hex(try exported.softChild(softPath).privateKey.bytes),
                               "hardPrivateKey": .hex(exportedChild.privateKey.bytes),
                               "hardChainCode": .hex(exportedChild.chainCode)]),
        ])
    }

    /// `{n, t, seed, participants, path, instanceId, setupHash}` → the public transcript of one hard
    /// derivation run through the state machine directly (parent public data, every broadcast) and
    /// the child's public fields, so Python can recompute dkls23.md §15 from the spec.
    static func hardDerive(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let keyshares = try keygen(input, rng: &rng)
        let participants = try input.ints("participants", in: 0...(keyshares.count - 1)).map { PartyIndex($0) }
        let path = try DerivationPath(input.string("path"), allowHardened: true)
        let instance = try input.bytes("instanceId"), setup = try input.bytes("setupHash")
        var states: [DKLsHardDerivation.State] = [], messages: [ProtocolMessage] = []
        for k in participants {
            let parameters = try DKLsHardDerivation.Parameters(keyshare: keyshares[Int(k)], participants: participants,
                                                               instanceId: instance, setupHash: setup, path: path)
            let (state, message) = try DKLsHardDerivation.start(parameters, using: &rng)
            states.append(state)
            messages.append(message)
        }
        var children: [DKLsKeyshare] = []
        for (position, state) in states.enumerated() {
            children.append(try state.finish(DKLsInProcess.inbox(of: participants[position], messages)))
        }
        let parent = keyshares[0], child = children[0]
        return .object([
            "publicKey": .hex(try parent.publicKey.compressed()),
            "keyId": .hex(parent.keyId), "generation": .hex(parent.generation),
            "evaluationPoints": .array(parent.evaluationPoints.map { .hex($0.bytes) }),
            "vrfPublicShares": .array(try parent.vrfPublicShares.map { .hex(try $0.compressed()) }),
            "vrfPublicKey": .hex(try parent.vrfPublicKey.compressed()),
            "messages": .array(messages.map { .object(["from": .int(Int($0.from)), "payload": .hex($0.payload)]) }),
            "child": .object([
                "publicKey": .hex(try child.publicKey.compressed()), "chainCode": .hex(child.rootChainCode),
                "keyId": .hex(child.keyId), "generation": .hex(child.generation),
                "publicShares": .array(try child.publicShares.map { .hex(try $0.compressed()) }),
                "parentPublicShares": .array(try parent.publicShares.map { .hex(try $0.compressed()) }),
                "agree": .bool(children.allSatisfy { $0.publicKey == child.publicKey && $0.generation == child.generation }),
            ]),
        ])
    }
}
