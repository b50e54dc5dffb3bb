import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardChains
import SilentShardCore

/// Chain helpers (issue 21) for the interop suite: artifacts made with in-process threshold keys, for
/// the chains' own libraries to check.
enum ChainOperations {
    /// `{seed, path, messages: [hex]}` → a 2-of-2 DKLs23 key's child at `path`: its compressed public
    /// key, its EIP-55 address, and the `personal_sign` signature (`r ‖ s ‖ v`, v = 27/28) of each message,
    /// each checked by the SDK (it recovers to the address) before it is returned.
    static func ethereumPersonalSign(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let keyshare = try Keyshare(dkls: shares[0], mode: .duo)
        let path = try input.optionalString("path") ?? "m"
        let child = try keyshare.childPublicKey(path: path)
        let derivation = try DerivationPath(path)
        var signatures: [JSONValue] = []
        let address = try EthereumAddress(publicKey: child)
        for message in try input.byteArrays("messages") {
            let hash = EthereumPersonalMessage.hash(Data(message))
            let signature = try EthereumSignature(Signature(ecdsa: try DKLsInProcess.sign(shares, messageHash: [UInt8](hash),
                                                                                         path: derivation, using: &rng)))
            guard try EthereumPersonalMessage.signer(of: Data(message), signature: signature) == address else {
                throw ChainError.signatureMismatch
            }
            signatures.append(.hex([UInt8](signature.rsv)))
        }
        return .object([
            "publicKey": .hex([UInt8](child)),
            "address": .string(address.checksummed),
            "signatures": .array(signatures),
        ])
    }
}
