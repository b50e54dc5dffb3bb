import MPCCrypto

extension DKLsSign {
    /// After a signer's finish: waits for the other signers' finish messages and assembles the
    /// signature (dkls23.md §13.6–13.7). Everything here is public.
    public struct FinishState: Sendable {
        let fsid: [UInt8]
        let messageHash: [UInt8]
        let signers: [PartyIndex]
        let partyIndex: PartyIndex
        let derivedKey: Secp256k1.Point
        let nonce: Secp256k1.Point
        let ownW: Secp256k1.Scalar
        let ownU: Secp256k1.Scalar

        /// (q − 1)/2, the low-S bound.
        private static let halfOrder = Secp256k1.Scalar.orderBytes.enumerated().map { index, byte -> UInt8 in
            // q is odd: (q − 1)/2 = q >> 1.
            let carry: UInt8 = index > 0 ? Secp256k1.Scalar.orderBytes[index - 1] & 1 : 0
            return (byte >> 1) | (carry << 7)
        }

        /// Combines every signer's finish into a low-S signature with recovery id, verified under P′
        /// before it is returned. Message mismatch or an invalid result is `signingFailed` (no ban).
        public func combine(_ messages: [ProtocolMessage]) throws(ProtocolError) -> Secp256k1.ECDSASignature {
            let others = Set(signers.filter { $0 != partyIndex })
            let finishes = try RoundInbox(tag: DKLsTag.signFinish, broadcast: true, receiver: partyIndex, senders: others)
                .collect(messages)
            var w = ownW, u = ownU
            for j in others.sorted() {
                let payload = finishes[j] ?? []
                guard payload.count == finishSize else { throw .abort(party: j, reason: .malformedMessage) }
                var reader = ByteReader(payload, from: j)
                guard Bits.equal(try reader.read(32), fsid) else { throw .abort(party: j, reason: .transcriptMismatch) }
                guard try reader.read(32) == messageHash else { throw .signingFailed(party: j, reason: .messageMismatch) }
                w += try reader.readSecp256k1Scalar()
                u += try reader.readSecp256k1Scalar()
                try reader.finish()
            }
            guard let uInverse = try? u.inverse(), let encodedR = try? nonce.compressed() else {
                throw .signingFailed(party: nil, reason: .invalidSignature)
            }
            var s = w * uInverse
            let x = Array(encodedR[1...])
            let rx = (try? Secp256k1.Scalar(reducing: x)) ?? .zero
            var recoveryId: UInt8 = (encodedR[0] == 0x03 ? 1 : 0) | ((try? Secp256k1.Scalar(bytes: x)) == nil ? 2 : 0)
            if s.bytes.lexicographicallyPrecedes(Self.halfOrder) == false && s.bytes != Self.halfOrder {
                s = -s
                recoveryId ^= 1
            }
            guard !s.isZero, !rx.isZero,
                  let signature = try? Secp256k1.ECDSASignature(r: rx.bytes, s: s.bytes, recoveryId: recoveryId),
                  Secp256k1.ECDSA.verify(signature, hash: messageHash, publicKey: derivedKey)
            else { throw .signingFailed(party: nil, reason: .invalidSignature) }
            return signature
        }
    }
}
