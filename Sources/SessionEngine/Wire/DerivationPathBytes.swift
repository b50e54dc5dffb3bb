/// A derivation path on the wire: `u8(depth) ‖ u32(index)…`, bit 31 = hardened (dkls23.md §4).
package struct DerivationPathBytes: Sendable, Equatable {
    package static let hardenedBit: UInt32 = 0x8000_0000
    package let indices: [UInt32]

    package init(indices: [UInt32]) { self.indices = indices }

    /// Decodes strictly (exact length). Failure: INVALID_PARAMETER.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes, failure: .invalidParameter)
        let depth = Int(try reader.readUInt8())
        var indices: [UInt32] = []
        for _ in 0..<depth { indices.append(try reader.readUInt32()) }
        try reader.finish()
        self.indices = indices
    }

    package var encoded: [UInt8] {
        var writer = WireWriter()
        writer.append(uint8: UInt8(clamping: indices.count))
        for index in indices { writer.append(uint32: index) }
        return writer.bytes
    }

    /// Whether every step is non-hardened.
    package var isSoft: Bool { indices.allSatisfy { $0 & Self.hardenedBit == 0 } }
}
