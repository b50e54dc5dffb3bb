import MPCCrypto

extension DKLsDKG {
    /// What a DKG run produces (dkls23.md §12.1). All n parties run the same three rounds; the mode decides
    /// the polynomials' constant terms and what is known in advance.
    public enum Mode: Sendable {
        /// A new key: random constants, committed, revealed and proven.
        case keygen
        /// Refresh, or recovery of lost shares: the `holders` (≥ t parties) re-share the same key to
        /// all n parties with fresh shares, points, base OTs and zero seeds. A holder passes its
        /// current keyshare; a party outside the holders passes its old keyshare if it still has one,
        /// or nil (it lost it) — and every party passes the public key it expects.
        case refresh(holders: [PartyIndex], keyshare: DKLsKeyshare?, expectedPublicKey: Secp256k1.Point)
        /// Import of an existing key: the `importer` passes the private key; every party knows the
        /// public key and the root chain code (from the signed setup). Fused dealer split + refresh.
        case importKey(importer: PartyIndex, publicKey: Secp256k1.Point, chainCode: [UInt8], privateKey: Secp256k1.Scalar?)

        /// The operation code hashed into ctx.
        var operation: UInt8 {
            switch self {
            case .keygen: return 1
            case .refresh: return 2
            case .importKey: return 3
            }
        }

        /// Whether A_{i,0} is transmitted (with a proof) rather than implied.
        var sendsKeyConstant: Bool {
            if case .keygen = self { return true }
            return false
        }

        /// Whether B_{i,0} is transmitted (with a proof) rather than implied.
        var sendsVRFConstant: Bool {
            switch self {
            case .keygen, .importKey: return true
            case .refresh: return false
            }
        }

        var isKeygen: Bool { sendsKeyConstant }

        /// The key id bound into ctx (empty for keygen).
        func keyId() throws(ProtocolError) -> [UInt8] {
            switch self {
            case .keygen: return []
            case .refresh(_, _, let key), .importKey(_, let key, _, _): return DKLsHash.h("key-id", try DKLsHash.enc(key))
            }
        }

        /// Checks the mode against the session's parameters (caller input, not a peer's fault).
        func validate(partyCount n: Int, threshold t: Int, partyIndex i: PartyIndex) throws(ProtocolError) {
            let invalid = ProtocolError.invalidInput(.invalidParameters)
            switch self {
            case .keygen:
                return
            case .refresh(let holders, let keyshare, let expected):
                guard holders == Array(Set(holders)).sorted(), holders.count >= t,
                      holders.allSatisfy({ Int($0) < n })
                else { throw invalid }
                if holders.contains(i) && keyshare == nil { throw invalid }
                if let keyshare {
                    guard keyshare.partyCount == n, keyshare.threshold == t, keyshare.partyIndex == i,
                          keyshare.publicKey == expected
                    else { throw .invalidInput(.invalidKeyshare) }
                }
            case .importKey(let importer, let publicKey, let chainCode, let privateKey):
                guard Int(importer) < n, chainCode.count == 32, !publicKey.isIdentity else { throw invalid }
                if i == importer {
                    guard let privateKey, !privateKey.isZero, Secp256k1.Point(base: privateKey) == publicKey else {
                        throw invalid
                    }
                }
            }
        }
    }
}

extension DKLsDKG {
    /// The protocol key id of a public key, `H("key-id"; enc(P))` (dkls23.md §12.4): what SETUP's key_id
    /// must be for an import, computable before the run.
    public static func keyId(for publicKey: Secp256k1.Point) throws(ProtocolError) -> [UInt8] {
        DKLsHash.h("key-id", try DKLsHash.enc(publicKey))
    }
}
