import MPCCrypto
import SilentShardCore

/// The session layer's wire format (`docs/protocol/session.md` §3–§4), for the Python cross-checks.
enum SessionOperations {
    /// `{device_type: "ed25519"|"p256", device_key (hex private: seed / scalar), cloud_key, instance_id,
    /// timestamp, mode, algorithm, operation, session_signing_seed, session_x25519}` → a keygen-style
    /// SETUP frame `{frame, setup_hash, header, payload}`, signed as the SDK signs it.
    static func setup(_ input: CaseInput) throws -> JSONValue {
        let deviceSecret = try input.bytes("device_key")
        let deviceKey: DeviceKey
        let sign: ([UInt8]) throws -> [UInt8]
        switch try input.string("device_type") {
        case "ed25519":
            let key = try Ed25519.SigningKey(seed: deviceSecret)
            deviceKey = try DeviceKey(type: .ed25519, publicKey: key.verifyingKey.bytes)
            sign = { key.signature(for: $0) }
        case "p256":
            let key = try P256.SigningKey(rawRepresentation: deviceSecret)
            deviceKey = try DeviceKey(type: .p256, publicKey: key.verifyingKey.x963Representation)
            sign = { try key.signature(for: $0).rawRepresentation }
        default: throw InteropError.outOfRange(field: "device_type")
        }
        let sessionKeys = SessionKeyPair(signingKey: try Ed25519.SigningKey(seed: try input.bytes("session_signing_seed")),
                                         agreementKey: try X25519.PrivateKey(rawRepresentation: try input.bytes("session_x25519")))
        guard let mode = SessionMode(rawValue: UInt8(try input.int("mode", in: 1...2))),
              let algorithm = SessionAlgorithm(rawValue: UInt8(try input.int("algorithm", in: 1...2))),
              let operation = SessionOperation(rawValue: UInt8(try input.int("operation", in: 1...10)))
        else { throw InteropError.outOfRange(field: "mode") }
        let parties: [UInt8] = mode == .duo ? [0, 1] : [0, 1, 2]
        let payload = SetupPayload(mode: mode, algorithm: algorithm, operation: operation,
                                   timestamp: UInt64(try input.int("timestamp", in: 0...Int.max)), deviceKey: deviceKey,
                                   sessionKeys: sessionKeys.publicKeys, cloudKey: try input.bytes("cloud_key"),
                                   participants: PartySet(parties)).encoded()
        let header = FrameHeader(kind: .setup, sender: 0, receiver: 0xFF, length: UInt32(payload.count),
                                 instanceID: try input.identifier("instance_id", as: InstanceID.self))
        let signature = try sign(SessionHash.signingInput(.setup, header.encoded() + payload))
        let frame = Frame(header: header, payload: payload, signature: signature)
        return .object([
            "frame": .hex(frame.encoded()), "header": .hex(header.encoded()), "payload": .hex(payload),
            "setup_hash": .hex(SessionHash.setupHash(headerAndPayload: frame.headerAndPayload).bytes),
        ])
    }

    /// `{mode: "seal"|"open", local, peer, local_x25519 (private), peer_x25519 (public), setup_hash,
    /// instance_id, tag, seq, data}` → seal: `{frame}` (a P2P frame local → peer); open: `{plaintext}`
    /// of a P2P frame (hex `data`) peer → local.
    static func pointToPoint(_ input: CaseInput) throws -> JSONValue {
        let channel = try PointToPointChannel(
            local: UInt8(try input.int("local", in: 0...2)),
            localKey: try X25519.PrivateKey(rawRepresentation: try input.bytes("local_x25519")),
            peer: UInt8(try input.int("peer", in: 0...2)),
            peerKey: try X25519.PublicKey(bytes: try input.bytes("peer_x25519")),
            setupHash: try input.identifier("setup_hash", as: SetupHash.self))
        let data = try input.bytes("data")
        switch try input.string("mode") {
        case "seal":
            let frame = try channel.seal(data, tag: UInt16(try input.int("tag", in: 0...0xFFFF)),
                                         seq: UInt32(try input.int("seq", in: 0...Int(UInt32.max))),
                                         instanceID: try input.identifier("instance_id", as: InstanceID.self))
            return .object(["frame": .hex(frame.encoded())])
        case "open":
            return .object(["plaintext": .hex(try channel.open(try Frame.parseSingle(data)))])
        default: throw InteropError.outOfRange(field: "mode")
        }
    }
}
