import MPCCrypto

/// Party i's DKLs23 keyshare (spec §11): its Shamir shares of the signing key x and of the VRF key v,
/// the public data every party agreed on, and for every other party a zero-sharing seed and the two
/// OT-extension setups. Secret fields are internal; `description` shows public fields only.
public struct DKLsKeyshare: Sendable {
    /// 2 since protocol v2 (SoftSpokenOT setups, dkls23.md §11); version 1 (KOS) is refused.
    public static let version: UInt8 = 2

    public let partyCount: Int
    public let threshold: Int
    public let partyIndex: PartyIndex
    /// H("key-id"; enc(P)); unchanged by refresh.
    public let keyId: [UInt8]
    /// The generation id: the DKG transcript hash; new after every refresh.
    public let generation: [UInt8]
    /// The joint public key P = x·G.
    public let publicKey: Secp256k1.Point
    /// The root chain code (BIP32).
    public let rootChainCode: [UInt8]
    /// V = v·G for hard derivation.
    public let vrfPublicKey: Secp256k1.Point
    /// x_k for every party k (public, random, non-zero, distinct).
    public let evaluationPoints: [Secp256k1.Scalar]
    /// S_k = s_k·G for every party k.
    public let publicShares: [Secp256k1.Point]
    /// V_k = v_k·G for every party k.
    public let vrfPublicShares: [Secp256k1.Point]

    let share: Secp256k1.Scalar
    let vrfShare: Secp256k1.Scalar
    /// Per other party j (ascending).
    let pairwise: [PartyIndex: PairwiseSetup]

    /// What party i shares with party j. Not `Equatable`: a plain `==` on secret setups is not constant
    /// time; tests get one from the test target (issue 33).
    struct PairwiseSetup: Sendable {
        /// zseed_{ij} (the same at both ends).
        let zeroSeed: [UInt8]
        /// i is the OT-extension receiver (RVOLE Bob) toward j.
        let receiver: SoftSpokenOT.ReceiverSetup
        /// i is the OT-extension sender (RVOLE Alice) toward j.
        let sender: SoftSpokenOT.SenderSetup
    }

    /// The other parties' indices, ascending.
    public var peers: [PartyIndex] { (0..<PartyIndex(partyCount)).filter { $0 != partyIndex } }
}

extension DKLsKeyshare: CustomStringConvertible {
    public var description: String {
        "DKLsKeyshare(party \(partyIndex) of \(partyCount), threshold \(threshold), keyId \(Hex.encode(keyId)))"
    }
}
