import MPCProtocols

/// The algorithm a session runs, as SETUP field 0x02 codes it: the SDK's one algorithm enum (its raw
/// values are the wire codes).
package typealias SessionAlgorithm = Keyshare.Algorithm

extension Keyshare.Algorithm {
    /// The seeds' `NetworkAction.algorithm` string.
    package var routeName: String { self == .ecdsa ? "ecdsa" : "eddsa" }
}

/// How a protocol message travels (session.md §3.7).
package enum ProtocolDelivery: Sendable, Equatable {
    case broadcast
    case pointToPoint
}

/// The protocol tag registry (session.md §3.7): which tags exist under each algorithm and their delivery. The
/// tags themselves are the protocol modules' (`DKLsTag`, `FROST.MessageTag`), not duplicated here.
package enum ProtocolTagRegistry {
    private static let ecdsa: [UInt16: ProtocolDelivery] = [
        DKLsTag.dkgRound1Broadcast: .broadcast, DKLsTag.dkgRound1Direct: .pointToPoint,
        DKLsTag.dkgRound2Broadcast: .broadcast, DKLsTag.dkgRound2Direct: .pointToPoint,
        DKLsTag.dkgRound3Broadcast: .broadcast, DKLsTag.signRound1Broadcast: .broadcast,
        DKLsTag.signRound1Direct: .pointToPoint, DKLsTag.signRound2Direct: .pointToPoint,
        DKLsTag.signFinish: .broadcast, DKLsTag.hardDerivation: .broadcast,
        DKLsTag.exportShare: .pointToPoint,
    ]

    private static let eddsa: [UInt16: ProtocolDelivery] = Dictionary(
        uniqueKeysWithValues: FROST.MessageTag.allCases.map { ($0.rawValue, $0.isPointToPoint ? .pointToPoint : .broadcast) })

    /// The delivery of `tag` under `algorithm`, or nil if the tag is unknown.
    package static func delivery(of tag: UInt16, algorithm: SessionAlgorithm) -> ProtocolDelivery? {
        switch algorithm {
        case .ecdsa: return ecdsa[tag]
        case .eddsa: return eddsa[tag]
        }
    }

    /// The finish tag, the only one a FINAL_REQUEST/FINAL_RESPONSE may carry (session.md §8.4).
    package static let finishTag: UInt16 = DKLsTag.signFinish

    /// Whether a frame's kind agrees with its tag (session.md §3.7): BCAST carries broadcast tags, P2P carries
    /// point-to-point tags, FINAL kinds carry the finish tag, every other kind tag 0. Unknown tags fail.
    package static func isConsistent(kind: FrameKind, tag: UInt16, algorithm: SessionAlgorithm) -> Bool {
        switch kind {
        case .broadcast: return delivery(of: tag, algorithm: algorithm) == .broadcast
        case .pointToPoint: return delivery(of: tag, algorithm: algorithm) == .pointToPoint
        case .finalRequest, .finalResponse:
            // DKLs23 finish and FROST round 2 share 0x1301.
            return tag == finishTag && delivery(of: tag, algorithm: algorithm) == .broadcast
        default: return tag == 0
        }
    }
}
