/// A failure of the chain helpers: malformed input from outside (addresses, signatures, encodings), or an
/// artifact that failed its own check. Cases carry no secrets.
public enum ChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The public key is not a valid key of the chain's curve.
    case invalidPublicKey
    /// The text is not an address of this chain (`reason` says why).
    case invalidAddress(reason: String)
    /// A mixed-case Ethereum address whose capitalization is not its EIP-55 checksum.
    case checksumMismatch
    /// The signature is malformed or not of this chain's scheme (`reason` says why).
    case invalidSignature(reason: String)
    /// Bytes or text from outside that are not a valid encoding (RLP, a transaction, a quantity, EIP-712
    /// typed data and its JSON).
    case invalidEncoding(reason: String)
    /// The signature does not verify for the expected key: the signing closure signed with another key,
    /// another path, or another message.
    case signatureMismatch
    /// Valid input that this module does not handle (`reason` says what): a sighash type other than
    /// SIGHASH_ALL, a PSBT version other than 0.
    case unsupported(reason: String)
    /// An artifact that is not complete yet (`reason` says what is missing): a PSBT input not finalized.
    case incomplete(reason: String)

    public var description: String {
        switch self {
        case .invalidPublicKey: "invalid public key"
        case .invalidAddress(let reason): "invalid address: \(reason)"
        case .checksumMismatch: "address checksum (EIP-55) mismatch"
        case .invalidSignature(let reason): "invalid signature: \(reason)"
        case .invalidEncoding(let reason): "invalid encoding: \(reason)"
        case .signatureMismatch: "the signature does not verify for the expected key"
        case .unsupported(let reason): "unsupported: \(reason)"
        case .incomplete(let reason): "incomplete: \(reason)"
        }
    }
}
