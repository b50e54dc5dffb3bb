import MPCCrypto

/// The session layer's hashing and signing-input conventions (`docs/protocol/session.md` §0, §1.5).
package enum SessionHash {
    private static let domain = DomainHash(protocolLabel: "SilentShard-Session-v1")

    /// `Hs(tag; f1..fk) = SHA-256(lp("SilentShard-Session-v1") ‖ lp(tag) ‖ u32(k) ‖ lp(f1) ‖ … ‖ lp(fk))`.
    package static func hash(_ tag: String, _ fields: [UInt8]...) -> [UInt8] {
        domain.hash(tag, fields: fields)
    }

    /// `Hs` with the fields as an array.
    package static func hash(_ tag: String, fields: [[UInt8]]) -> [UInt8] {
        domain.hash(tag, fields: fields)
    }

    /// `setup_hash = Hs("setup"; header ‖ payload)` of a SETUP frame (signature excluded).
    package static func setupHash(headerAndPayload: [UInt8]) -> SetupHash {
        SetupHash(checked: hash("setup", headerAndPayload))
    }

    /// `D = Hs("commit"; setup_hash, key_id, gen, T)`.
    package static func commitDigest(setupHash: SetupHash, keyID: KeyID, gen: Generation, transcript: [UInt8]) -> [UInt8] {
        hash("commit", setupHash.bytes, keyID.bytes, gen.bytes, transcript)
    }

    /// `sigmsg(label, m) = "SilentShard/v3/" ‖ label ‖ 0x00 ‖ m`.
    package static func signingInput(_ label: SigningLabel, _ message: [UInt8]) -> [UInt8] {
        var out = Array("SilentShard/v3/".utf8)
        out.append(contentsOf: label.rawValue.utf8)
        out.append(0)
        out.append(contentsOf: message)
        return out
    }
}

/// The labels under which session-layer signatures are made (session.md §0, §1.2). A key signs only under its
/// own labels: device key `setup`; node key `accept`, `reject`, `link`, `export`; cluster key `cert`;
/// session key `frame`.
package enum SigningLabel: String, Sendable, CaseIterable {
    case setup, accept, reject, frame, cert, link, export
    /// PRESIG_STATUS (session.md §8.6, protocol v1.2).
    case status
}

/// The broadcast transcript digest `T` (session.md §1.5): every SETUP, ACCEPT and BCAST frame of the session
/// (header ‖ payload, as this party received or sent it), sorted by (kind, tag, sender).
///
/// Clarification (session.md §13.1 item 1): `T = Hs("transcript"; f_1, …, f_k)`; the spec's `lp(f_i)` is
/// read as the length prefix `Hs` already applies to every field, not as a second one.
package struct TranscriptDigest: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        let kind: UInt8
        let tag: UInt16
        let sender: UInt8
        let bytes: [UInt8]
    }

    private var entries: [Entry] = []

    package init() {}

    /// Whether the kind belongs in `T`.
    package static func covers(_ kind: FrameKind) -> Bool {
        kind == .setup || kind == .accept || kind == .broadcast
    }

    /// Adds a frame (header ‖ payload) if its kind belongs in `T`; returns whether it was added.
    @discardableResult
    package mutating func add(header: FrameHeader, payload: [UInt8]) -> Bool {
        guard Self.covers(header.kind) else { return false }
        entries.append(Entry(kind: header.kind.rawValue, tag: header.tag, sender: header.sender,
                             bytes: header.encoded() + payload))
        return true
    }

    /// Number of frames covered so far.
    package var count: Int { entries.count }

    /// `T` over the frames added so far.
    package var digest: [UInt8] {
        let sorted = entries.sorted { a, b in
            (a.kind, a.tag, a.sender) < (b.kind, b.tag, b.sender)
        }
        return SessionHash.hash("transcript", fields: sorted.map(\.bytes))
    }
}
