/// Serves one case of an operation: its input in, its result object out. A thrown error becomes that
/// case's `{"error": ...}` result; it never stops the other cases.
typealias CaseHandler = @Sendable (CaseInput) throws -> JSONValue

/// The operations the CLI knows, by the name a request's `op` uses.
enum Operations {
    static let handlers: [String: CaseHandler] = [
        "secp256k1": Secp256k1Operations.arithmetic,
        "secp256k1-decode": Secp256k1Operations.decode,
        "ecdsa-sign": Secp256k1Operations.sign,
        "ecdsa-verify": Secp256k1Operations.verify,
        "ed25519-sign": Ed25519Operations.sign,
        "ed25519-verify": Ed25519Operations.verify,
        "ed25519-scalar": Ed25519Operations.arithmetic,
        "ed25519-decode": Ed25519Operations.decode,
        "x25519": KeyAgreementOperations.x25519,
        "p256-sign": P256Operations.sign,
        "p256-verify": P256Operations.verify,
        "chacha20poly1305": AEADOperations.chaCha20Poly1305,
        "xchacha20poly1305": AEADOperations.xChaCha20Poly1305,
        "sha256": HashOperations.sha256,
        "sha512": HashOperations.sha512,
        "hmac-sha256": HashOperations.hmacSHA256,
        "hmac-sha512": HashOperations.hmacSHA512,
        "aes-prg": HashOperations.aesPRG,
        "domain-hash": HashOperations.domainHash,
        "dkls-sign": DKLsOperations.sign,
        "bip32-ckdpub": DKLsOperations.derive,
        "dkls-xpub": DKLsLifecycleOperations.xpub,
        "keyshare-xpub": DKLsLifecycleOperations.sdkXpub,
        "dkls-lifecycle": DKLsLifecycleOperations.lifecycle,
        "dkls-hard-derive": DKLsLifecycleOperations.hardDerive,
        "frost-sign": FROSTOperations.sign,
        "frost-derive": FROSTOperations.derive,
        "frost-bip340-sign": FROSTSecp256k1Operations.bip340Sign,
        "session-setup": SessionOperations.setup,
        "session-p2p": SessionOperations.pointToPoint,
        "eth-personal-sign": ChainOperations.ethereumPersonalSign,
        "eth-transactions": ChainOperations.ethereumTransactions,
        "eth-typed-data": ChainOperations.ethereumTypedData,
        "btc-addresses": ChainOperations.bitcoinAddresses,
        "btc-psbt": ChainOperations.bitcoinPSBT,
        "sol-sign": ChainOperations.solanaSign,
    ]

    /// Runs every case of a request through the named operation.
    static func run(operation: String, cases: [JSONValue]) throws(InteropError) -> [JSONValue] {
        guard let handler = handlers[operation] else { throw .unknownOperation(operation) }
        return cases.map { value in
            do {
                return try handler(CaseInput(value: value))
            } catch {
                return ErrorReport.object(for: error)
            }
        }
    }
}
