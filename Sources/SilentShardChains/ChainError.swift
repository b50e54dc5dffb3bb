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
    /// EIP-712 typed data with a name that is not an ASCII identifier (`[A-Za-z_$][A-Za-z0-9_$]*`, at most 256
    /// bytes): a type name, `primaryType`, a member name, or a key of `domain`, `message` or a nested struct
    /// value. Refused before the name is looked up or stored: Swift `String`s compare by Unicode canonical
    /// equivalence (U+212A KELVIN SIGN equals `K`), so a look-alike key would share its ASCII twin's slot here
    /// while other EIP-712 implementations keep the two apart. `path` says where (`types`, `types.Mail`,
    /// `primaryType`, `domain`, `message.from`); `name` is the name as written, cut to 64 Unicode scalars.
    case invalidTypedDataName(path: String, name: String)
    /// A segwit v0 PSBT input to sign without `PSBT_IN_NON_WITNESS_UTXO` (its previous transaction): the
    /// amount it signs would come from `PSBT_IN_WITNESS_UTXO` alone, which BIP-143's fee attack
    /// (CVE-2020-14199) lies about. See `BitcoinPSBT.SigningPolicy` for the opt-out.
    case missingNonWitnessUTXO(input: Int)
    /// A legacy (EIP-155) Ethereum transaction whose chain id is above `maximum`
    /// (`EthereumTransaction.maximumLegacyChainId`): its `v = chainId · 2 + 35 + yParity` would not fit 64 bits.
    case chainIdOutOfRange(chainId: UInt64, maximum: UInt64)

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
        case .invalidTypedDataName(let path, let name): "typed data: \(path): name \"\(name)\" is not an ASCII identifier"
        case .missingNonWitnessUTXO(let input):
            "input \(input): no PSBT_IN_NON_WITNESS_UTXO (the previous transaction): the amount a segwit v0 signature commits to is unchecked"
        case .chainIdOutOfRange(let chainId, let maximum): "chain id \(chainId) is above \(maximum) (EIP-155's v would not fit 64 bits)"
        }
    }
}
