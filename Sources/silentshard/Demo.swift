import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// `silentshard demo`: threshold keys and signatures with every party in this process (the duo/trio
/// demo over the network on an embedded local node arrives with the cloud node).
enum Demo {
    static func run() throws {
        var rng = SecureRandom()
        print("== ECDSA / secp256k1 (DKLs23), duo 2-of-2, all parties in this process")
        var clock = ContinuousClock.now
        let duo = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        print("keygen      \(elapsed(since: clock))  public key \(Hex.encode(try duo[0].publicKey.compressed()))")
        let hash = SHA256.hash(Array("Hello from SilentShard".utf8))
        clock = .now
        let signature = try DKLsInProcess.sign(duo, messageHash: hash, using: &rng)
        let verified = Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: duo[0].publicKey)
        print("sign        \(elapsed(since: clock))  r‖s‖v \(Hex.encode(signature.compact + [signature.recoveryId]))")
        print("verify (libsecp256k1): \(verified ? "valid" : "INVALID")")

        print("\n== ECDSA, trio 2-of-3: presign now, finish later, derived key m/44/60/0/0/0")
        let trio = try DKLsInProcess.keygen(partyCount: 3, threshold: 2, using: &rng)
        let path = try DerivationPath("m/44/60/0/0/0")
        clock = .now
        let presignatures = try DKLsInProcess.presign([trio[0], trio[2]], path: path, using: &rng)
        print("presign     \(elapsed(since: clock))")
        clock = .now
        let later = try DKLsInProcess.finish(presignatures, keyshares: [trio[0], trio[2]], messageHash: hash)
        let child = try path.derive(publicKey: trio[0].publicKey, chainCode: trio[0].rootChainCode)
        print("finish      \(elapsed(since: clock))  valid under the child key: \(Secp256k1.ECDSA.verify(later, hash: hash, publicKey: child.publicKey))")
        let reuse = Result { () throws(ProtocolError) in
            try DKLsInProcess.finish(presignatures, keyshares: [trio[0], trio[2]], messageHash: hash)
        }
        if case .failure(let error) = reuse { print("second use of the presignature refused: \(error)") }

        print("\n== EdDSA / Ed25519 (FROST), duo 2-of-2")
        clock = .now
        let edKeys = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        print("keygen      \(elapsed(since: clock))  public key \(Hex.encode(edKeys[0].publicKey.bytes))")
        let message = Array("Hello from SilentShard".utf8)
        clock = .now
        let edSignature = try FROST.LocalRun.sign(edKeys, signers: [0, 1], message: message, using: &rng)
        let edValid = (try? Ed25519.VerifyingKey(bytes: edKeys[0].publicKey.bytes))?.isValidSignature(edSignature, for: message) ?? false
        print("sign        \(elapsed(since: clock))  signature \(Hex.encode(edSignature))")
        print("verify (libsodium): \(edValid ? "valid" : "INVALID")")
        guard verified, edValid else { throw DemoFailure.invalidSignature }
    }

    enum DemoFailure: Error { case invalidSignature }

    private static func elapsed(since start: ContinuousClock.Instant) -> String {
        let duration = ContinuousClock.now - start
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%8.2f ms", milliseconds)
    }
}
