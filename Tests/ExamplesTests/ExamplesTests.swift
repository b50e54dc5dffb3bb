import ChildProcesses
import CloudNode
import ExampleSupport
import Foundation
import SilentShardTestSupport
import MPCCrypto
import SilentShardTestTraits
import Testing

/// The Examples/ programs, built by `swift build --build-tests` next to the test bundle, run as
/// subprocesses: alone (their own embedded node), against a node this test started
/// (`--node --cloud-key`), and with a wrong cloud key (must fail with a non-zero status).
@Suite("Examples", .serialized, .heavy, .timeLimit(.minutes(30)))
struct ExamplesTests {
    static let all = ["example-default-websocket", "example-subclassed-client", "example-custom-transport"]

    @Test(arguments: all)
    func runsAloneAndEverySignatureVerifies(example: String) async throws {
        let (status, output) = try await Self.run(example)
        #expect(status == 0, "\(output)")
        Self.expectVerified(output, signatures: 2)
        #expect(output.contains("ECDSA keygen") && output.contains("EdDSA keygen") && output.contains(" ms"), "\(output)")
    }

    @Test(arguments: ["example-default-websocket", "example-subclassed-client"])
    func runsAgainstAGivenNode(example: String) async throws {
        let node = try EmbeddedNode()
        let url = try #require(node.url)
        let (status, output) = try await Self.run(example, ["--node", url, "--cloud-key", node.cloudVerifyingKey])
        await node.stop()
        #expect(status == 0, "\(output)")
        #expect(output.contains("node \(url)") && !output.contains("embedded node"), "\(output)")
        Self.expectVerified(output, signatures: 2)
    }

    @Test func theSubclassLogsSizesAddsAHeaderAndRewritesTheKeygenRoute() async throws {
        let (status, output) = try await Self.run("example-subclassed-client")
        #expect(status == 0, "\(output)")
        #expect(output.contains("[ecdsa] connect /v3/ecdsa/keygen subprotocol duo-instance (path rewritten), header X-Client-Label"), "\(output)")
        #expect(output.contains("[eddsa] connect /v3/eddsa/sign subprotocol duo-instance with params, header X-Client-Label"), "\(output)")
        let lines = output.split(separator: "\n")
        #expect(lines.contains { $0.contains("[ecdsa] send ") && $0.hasSuffix(" bytes") })
        #expect(lines.contains { $0.contains("[eddsa] read ") && $0.hasSuffix(" bytes") })
        #expect(lines.contains { $0.hasSuffix("[ecdsa] disconnect") })
    }

    @Test func theCustomTransportIsRoutedByItsActionProvider() async throws {
        let (status, output) = try await Self.run("example-custom-transport")
        #expect(status == 0, "\(output)")
        // ECDSA: CustomActions renames the sign action; EdDSA: the stock `.eddsa` routing.
        #expect(output.contains("[link] open ecdsa/keygen\n"), "\(output)")
        #expect(output.contains("[link] open ecdsa/signature with params"), "\(output)")
        #expect(output.contains("[link] open eddsa/sign with params"), "\(output)")
        Self.expectVerified(output, signatures: 2)
    }

    @Test(arguments: ["example-default-websocket", "example-subclassed-client"])
    func aWrongCloudKeyFails(example: String) async throws {
        let node = try EmbeddedNode()
        let url = try #require(node.url)
        let wrongKey = Hex.encode(Ed25519.SigningKey().verifyingKey.bytes)
        let (status, output) = try await Self.run(example, ["--node", url, "--cloud-key", wrongKey])
        await node.stop()
        #expect(status == 1, "\(output)")
        #expect(output.contains("FAILED") && !output.contains("OK: every signature verified"), "\(output)")
    }

    @Test func badArgumentsAreRefused() async throws {
        let (status, output) = try await Self.run("example-custom-transport", ["--node", "ws://127.0.0.1:1"])
        #expect(status == 2, "\(output)")
        let (half, _) = try await Self.run("example-default-websocket", ["--node", "ws://127.0.0.1:1"])
        #expect(half == 2)
    }

    // MARK: - Helpers

    static func expectVerified(_ output: String, signatures: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let verified = output.components(separatedBy: "verified: yes").count - 1
        #expect(verified == signatures, "\(output)", sourceLocation: sourceLocation)
        #expect(!output.contains("verified: NO") && !output.contains("FAILED"), "\(output)", sourceLocation: sourceLocation)
        #expect(output.contains("OK: every signature verified"), "\(output)", sourceLocation: sourceLocation)
    }

    /// The built example: next to the test bundle, else in the repository's `.build/debug`.
    static func binary(_ name: String) throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var directories = [root.appendingPathComponent(".build/debug")]
        if let executable = Bundle.main.executableURL {
            directories.insert(executable.deletingLastPathComponent(), at: 0)
            // macOS: …/debug/X.xctest/Contents/MacOS/X
            directories.insert(executable.deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent(), at: 1)
        }
        for directory in directories {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ExampleNotBuilt(name: name, searched: directories.map(\.path))
    }

    struct ExampleNotBuilt: Error, CustomStringConvertible {
        let name: String
        let searched: [String]
        var description: String { "\(name) not built (run `swift build --build-tests`); searched \(searched)" }
    }

    /// Runs an example to completion off the cooperative pool; returns its status and stdout + stderr.
    static func run(_ name: String, _ arguments: [String] = []) async throws -> (Int32, String) {
        let pipe = Pipe()
        let process = try ChildProcess.run(try binary(name), arguments: arguments, standardOutput: .pipe(pipe),
                                           standardError: .pipe(pipe))
        let reader = pipe.fileHandleForReading
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = reader.readDataToEndOfFile()
                process.waitForExit(timeout: 300)
                continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
            }
        }
    }
}
