import MPCCrypto
import MPCProtocols

extension NodeCertificate {
    /// The checks session.md §1.3 requires of every received certificate: signature under `issuer`; role plays
    /// `senderIndex` (role 3 only in duo); `not_before − 600 s ≤ now ≤ not_after + 600 s`;
    /// validity ≤ 400 days; node key ≠ issuer key. `nowSeconds` is the device clock, passed in.
    package func verify(issuer: Ed25519.VerifyingKey, senderIndex: PartyIndex, mode: SessionMode,
                       nowSeconds: UInt64) throws(SessionError) {
        guard issuer.isValidSignature(signature, for: SessionHash.signingInput(.cert, tbsBytes)) else {
            throw .cloudVerificationFailed(.certificateSignature)
        }
        let roleMatches = mode == .duo ? role == .duo && senderIndex == 1 : role != .duo && role.partyIndex == senderIndex
        guard roleMatches else { throw .cloudVerificationFailed(.certificateRole) }
        let tolerance = SessionConstants.certificateClockToleranceSeconds
        guard notBefore <= notAfter, notAfter - notBefore <= SessionConstants.certificateMaximumValiditySeconds else {
            throw .cloudVerificationFailed(.certificateValidityTooLong)
        }
        guard nowSeconds >= notBefore || notBefore - nowSeconds <= tolerance else {
            throw .cloudVerificationFailed(.certificateNotYetValid)
        }
        guard nowSeconds <= notAfter || nowSeconds - notAfter <= tolerance else {
            throw .cloudVerificationFailed(.certificateExpired)
        }
        guard nodeKey != issuer else { throw .cloudVerificationFailed(.certificateKeyIsClusterKey) }
    }
}
