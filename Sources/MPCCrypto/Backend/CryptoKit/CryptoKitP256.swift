#if canImport(CryptoKit)
import CryptoKit
import Foundation

/// P-256 ECDSA on Apple platforms: CryptoKit (`P256.Signing`, which hashes with SHA-256 as OpenSSL's backend
/// does). Apple-only: CryptoKit is a Swift API that no Linux shim can stand in for, so this file is not compiled
/// by any Linux build (listed in docs/apple.md); keep it this small.
enum CryptoKitP256: P256BackendInterface {
    static func privateKey(rawRepresentation: [UInt8]) throws(CryptoError) -> (key: CryptoKit.P256.Signing.PrivateKey, x963: [UInt8]) {
        do {
            let key = try CryptoKit.P256.Signing.PrivateKey(rawRepresentation: Data(rawRepresentation))
            return (key, [UInt8](key.publicKey.x963Representation))
        } catch { throw .invalidKey }
    }

    static func publicKey(sec1: [UInt8]) throws(CryptoError) -> (key: CryptoKit.P256.Signing.PublicKey, x963: [UInt8]) {
        do {
            let key = sec1.count == 33
                ? try CryptoKit.P256.Signing.PublicKey(compressedRepresentation: Data(sec1))
                : try CryptoKit.P256.Signing.PublicKey(x963Representation: Data(sec1))
            return (key, [UInt8](key.x963Representation))
        } catch { throw .invalidKey }
    }

    static func sign(_ message: [UInt8], with key: CryptoKit.P256.Signing.PrivateKey) throws(CryptoError) -> [UInt8] {
        do { return [UInt8](try key.signature(for: Data(message)).rawRepresentation) }
        catch { throw .libraryFailure("P256.Signing.PrivateKey.signature") }
    }

    static func isValidSignature(_ rawSignature: [UInt8], for message: [UInt8], under key: CryptoKit.P256.Signing.PublicKey) -> Bool {
        guard let signature = try? CryptoKit.P256.Signing.ECDSASignature(rawRepresentation: Data(rawSignature)) else { return false }
        return key.isValidSignature(signature, for: Data(message))
    }
}
#endif
