import MPCCrypto

extension DKLsPresignature {
    /// The stored form (dkls23.md §13.4 step 9, table order; 262 + #S + 4·depth bytes):
    /// version ‖ key_id ‖ gen ‖ fsid ‖ enc(S) ‖ u8(i) ‖ path_bytes ‖ enc(P′) ‖ enc(R) ‖ sc(φ_i) ‖ sc(u_i) ‖ sc(y_i).
    ///
    /// Contains secrets: store it encrypted, like a keyshare. The object's single-use lock does not
    /// follow the bytes: whoever persists them must delete (or mark consumed) the stored copy in the
    /// same transaction that finishes it (session.md §8.3). A consumed presignature has no stored form.
    public func serialized() throws(ProtocolError) -> [UInt8] {
        guard let secrets = peekSecrets() else { throw .invalidInput(.presignatureAlreadyUsed) }
        var writer = ByteWriter(capacity: 262 + signers.count + pathBytes.count)
        writer.append(uint8: Self.version)
        writer.append(keyId)
        writer.append(generation)
        writer.append(fsid)
        writer.append(DKLsHash.encode(set: signers))
        writer.append(uint8: partyIndex)
        writer.append(pathBytes)
        try writer.append(derivedKey)
        try writer.append(nonce)
        writer.append(secrets.phi)
        writer.append(secrets.u)
        writer.append(secrets.y)
        return writer.bytes
    }

    /// Decodes a stored presignature (strict: exact length, sorted distinct signers containing the
    /// party, canonical scalars, valid points); any failure is `invalidInput(.presignatureMismatch)`.
    public static func deserialize(_ bytes: [UInt8]) throws(ProtocolError) -> DKLsPresignature {
        let invalid = ProtocolError.invalidInput(.presignatureMismatch)
        var reader = ByteReader(bytes, from: nil)
        do {
            guard try reader.readUInt8() == version else { throw invalid }
            let keyId = try reader.read(32), generation = try reader.read(32), fsid = try reader.read(32)
            let count = Int(try reader.readUInt8())
            let signers = try reader.read(count)
            guard count >= 2, signers == Array(Set(signers)).sorted() else { throw invalid }
            let partyIndex = try reader.readUInt8()
            guard signers.contains(partyIndex) else { throw invalid }
            let depth = Int(try reader.readUInt8())
            let path = try reader.read(4 * depth)
            let derivedKey = try reader.readSecp256k1Point()
            let nonce = try reader.readSecp256k1Point()
            let phi = try reader.readSecp256k1Scalar(nonZero: true)
            let u = try reader.readSecp256k1Scalar()
            let y = try reader.readSecp256k1Scalar()
            try reader.finish()
            return DKLsPresignature(keyId: keyId, generation: generation, fsid: fsid, signers: signers, partyIndex: partyIndex,
                                    pathBytes: [UInt8(depth)] + path, derivedKey: derivedKey, nonce: nonce,
                                    secrets: Secrets(phi: phi, u: u, y: y))
        } catch {
            throw invalid
        }
    }
}
