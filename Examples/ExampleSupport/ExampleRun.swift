import Foundation
import MPCCrypto
import duo

/// The part every example shares once it has a `DuoSession`: keygen, sign, verify the signature
/// independently of the SDK, and print one human line per operation.
public enum ExampleRun {
    /// Runs `body` against the target the arguments name, prints a summary and returns the process
    /// exit status: 0 only if every signature verified, 1 on a failure, 2 on bad arguments.
    public static func main(_ title: String, allowRemote: Bool = true, listen: Bool = true,
                            _ body: (ExampleTarget) async throws -> Bool) async -> Int32 {
        let target: ExampleTarget
        do {
            target = try ExampleTarget.make(arguments: Array(CommandLine.arguments.dropFirst()), allowRemote: allowRemote,
                                            listen: listen)
        } catch {
            print("\(title): \(error)")
            return 2
        }
        let location = target.embedded == nil ? "node \(target.url ?? "?")" : "embedded node \(target.url ?? "(in process)")"
        print("== \(title) — \(location), cloud key \(target.cloudVerifyingKey.prefix(16))…")
        let verified: Bool
        do {
            verified = try await body(target)
        } catch {
            // SilentShardError descriptions carry no secrets.
            print("FAILED: \(error)")
            await target.embedded?.stop()
            return 1
        }
        await target.embedded?.stop()
        print(verified ? "OK: every signature verified" : "FAILED: a signature did not verify")
        return verified ? 0 : 1
    }

    /// keygen → sign → verify on `session`; returns whether the signature verified.
    public static func keygenSignVerify(_ session: DuoSession) async throws -> Bool {
        let name = session.algorithm == .ecdsa ? "ECDSA" : "EdDSA"
        let keyshare = try await timed("\(name) keygen") { try await session.keygen() }
        print("   public key \(Hex.encode(Array(keyshare.publicKey)))")
        // ECDSA signs a 32-byte hash; EdDSA signs the message itself.
        let text = Data("Hello from a SilentShard example".utf8)
        let message = session.algorithm == .ecdsa ? Data(SHA256.hash(Array(text))) : text
        let signature = try await timed("\(name) sign") { try await session.signature(keyshare: keyshare, message: message) }
        let ok = SignatureCheck.verifies(signature, message: message, keyshare: keyshare)
        print("   \(name) signature \(Hex.encode(Array(signature.rawRepresentation)).prefix(24))… verified: \(ok ? "yes" : "NO")")
        return ok
    }

    /// Runs `body`, printing its name and duration in milliseconds.
    public static func timed<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        let value = try await body()
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        print("   \(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(String(format: "%8.1f", ms)) ms")
        return value
    }
}
