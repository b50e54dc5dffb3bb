import Foundation
import SilentShardCore

/// A Solana transaction on the wire: `compact-u16(n) ‖ n × 64-byte Ed25519 signatures ‖ message`, one
/// signature per required signer in `message.signers` order (all zeros until that signer signs).
public struct SolanaTransaction: Sendable, Equatable {
    public let message: SolanaMessage
    /// One per required signer; 64 zero bytes where a signer has not signed yet.
    public private(set) var signatures: [Data]

    /// An unsigned transaction of `message`.
    public init(message: SolanaMessage) {
        self.message = message
        signatures = Array(repeating: Data(count: 64), count: message.requiredSignatures)
    }

    /// Signs the message as `publicKey` (one of its required signers) through `sign` (the SDK's EdDSA
    /// signature of the message bytes, e.g. `{ try await session.signature(keyshare: key, message: $0,
    /// chainPath: path) }`); the signature must verify under that key (`signatureMismatch` otherwise).
    public mutating func sign(publicKey: Data, with sign: (Data) async throws -> Signature) async throws {
        _ = try signerIndex(publicKey)
        try add(try await sign(message.serialized), publicKey: publicKey)
    }

    /// Attaches `signature` (made elsewhere, e.g. by another co-signer) for the required signer
    /// `publicKey`; it must verify over the message under that key (`signatureMismatch` otherwise).
    public mutating func add(_ signature: Signature, publicKey: Data) throws(ChainError) {
        let index = try signerIndex(publicKey)
        guard signature.algorithm == .eddsa, signature.isValid(for: message.serialized, publicKey: publicKey) else {
            throw .signatureMismatch
        }
        signatures[index] = signature.rawRepresentation
    }

    private func signerIndex(_ publicKey: Data) throws(ChainError) -> Int {
        guard let index = message.signers.firstIndex(of: try SolanaAddress(publicKey: publicKey)) else {
            throw .invalidSignature(reason: "the key is not a signer of this message")
        }
        return index
    }

    /// Whether every required signer has a signature that verifies.
    public var isFullySigned: Bool {
        zip(message.signers, signatures).allSatisfy { signer, bytes in
            (try? Signature(eddsa: bytes))?.isValid(for: message.serialized, publicKey: signer.bytes) ?? false
        }
    }

    /// The wire bytes (what `sendTransaction` takes, base64 or base58 encoded).
    public var serialized: Data {
        Data(solanaShortVector(signatures.count)) + signatures.reduce(into: Data()) { $0 += $1 } + message.serialized
    }

    /// Parses wire bytes strictly: the signature count must be the message's required signers.
    public init(serialized data: Data) throws(ChainError) {
        var reader = SolanaReader([UInt8](data))
        let count = try reader.shortVector()
        var parsed: [Data] = []
        for _ in 0..<count { parsed.append(Data(try reader.take(64))) }
        let message = try SolanaMessage(serialized: Data(reader.rest()))
        guard message.requiredSignatures == count else { throw .invalidEncoding(reason: "signature count differs from the header") }
        self.message = message
        signatures = parsed
    }
}
