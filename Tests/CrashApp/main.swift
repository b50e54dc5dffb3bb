// silentshard-test-app: the app side of a trio presign or preSignFinal as its own process, for the tests
// that SIGKILL an app between any two of its steps (TrioPresignatureRestartTests). Test-only; not shipped.
//
//   silentshard-test-app presign|finish --url WS --cloud-key HEX --storage DIR --device-seed HEX --key-id HEX
//                        [--algorithm ecdsa|eddsa] [--signer a|b] [--message HEX] [--pause-at N]
//
// Every point where a killed app could leave different state — before and after each storage write or
// delete, each WebSocket send and read, and the POST — is numbered from 1 and announced on stdout as
// `POINT n label`; each FINAL_REQUEST is reported as `POSTED <presig id> <SHA-256 of the body>` before it is
// sent. At point `--pause-at` it prints `PAUSED n` and stops there until it is killed. At the
// end it prints `PRESIGNED <id>` or `SIGNED <id> <message> <signature>` (hex) and exits 0; a failure
// prints `FAILED <error>` and exits 1.

import Foundation
import MPCCrypto
import SilentShardCore
import trio

/// Numbers the points and pauses at the chosen one.
final class Points: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    let pauseAt: Int?

    init(pauseAt: Int?) { self.pauseAt = pauseAt }

    func reach(_ label: String) {
        lock.lock()
        count += 1
        let number = count
        lock.unlock()
        print("POINT \(number) \(label)")
        fflush(nil)
        guard number == pauseAt else { return }
        print("PAUSED \(number)")
        fflush(nil)
        while true { sleep(60) }
    }
}

/// The app's storage, announcing each change before and after it.
struct AnnouncingStorage: StorageClient {
    let inner: FileStorageClient
    let points: Points

    func read(keyId: String) async throws -> KeyshareRecord? { try await inner.read(keyId: keyId) }

    func write(_ record: KeyshareRecord) async throws {
        points.reach("before-write \(record.keyId.prefix(24))")
        try await inner.write(record)
        points.reach("after-write \(record.keyId.prefix(24))")
    }

    func delete(keyId: String) async throws {
        points.reach("before-delete \(keyId.prefix(24))")
        try await inner.delete(keyId: keyId)
        points.reach("after-delete \(keyId.prefix(24))")
    }
}

/// The default WebSocket client, announcing each message and the POST.
final class AnnouncingClient: TrioNetworkClient, @unchecked Sendable {
    var points: Points?

    override func send(bytes: Data) async throws {
        points?.reach("before-send")
        try await super.send(bytes: bytes)
        points?.reach("after-send")
    }

    override func read() async throws -> Data {
        let data = try await super.read()
        points?.reach("after-read")
        return data
    }

    override func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        // What was sent, for the parent's ledger (before the pause point: a kill there still reports it).
        let bytes = [UInt8](body)
        if let header = try? FrameHeader.decode(bytes.prefix(FrameHeader.byteCount)), header.kind == .finalRequest {
            print("POSTED \(Hex.encode(header.instanceID.bytes)) \(Hex.encode(SHA256.hash(bytes)))")
            fflush(nil)
        }
        points?.reach("before-post")
        let answer = try await super.sendPostRequest(action: action, params: params, body: body)
        points?.reach("after-post")
        return answer
    }
}

func fail(_ message: String) -> Never {
    print("FAILED \(message)")
    fflush(nil)
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first, command == "presign" || command == "finish" else { fail("usage: presign|finish --options") }
let options: [String: String] = {
    var parsed: [String: String] = [:]
    var index = 1
    while index + 1 < arguments.count, arguments[index].hasPrefix("--") {
        parsed[String(arguments[index].dropFirst(2))] = arguments[index + 1]
        index += 2
    }
    return parsed
}()
@MainActor func option(_ name: String) -> String {
    guard let value = options[name] else { fail("missing --\(name)") }
    return value
}

let points = Points(pauseAt: options["pause-at"].flatMap(Int.init))
let algorithm: Keyshare.Algorithm = options["algorithm"] == "eddsa" ? .eddsa : .ecdsa
let storage: AnnouncingStorage
do { storage = AnnouncingStorage(inner: try FileStorageClient(directory: option("storage")), points: points) } catch {
    fail("storage: \(error)")
}
guard let seed = try? Hex.decode(option("device-seed")), let deviceKey = try? Ed25519.SigningKey(seed: seed) else {
    fail("device seed")
}
let client = AnnouncingClient(websocketConfig: WebsocketConfig(url: option("url"), authenticationToken: options["token"]))
client.points = points
let signer = SoftwareEd25519MessageSigner(signingKey: deviceKey)
let session = algorithm == .ecdsa
    ? SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: option("cloud-key"), networkClient: client,
                                      storageClient: storage)
    : SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: option("cloud-key"), networkClient: client,
                                      storageClient: storage)

do {
    guard let record = try await storage.read(keyId: option("key-id")), let current = record.current else { fail("no keyshare") }
    let keyshare = try AppStoredShare.decode(current, mode: .trio).keyshare
    switch command {
    case "presign":
        let presignature = try await session.preSignature(keyshare: keyshare, signer: options["signer"] == "b" ? .nodeB : .nodeA)
        print("PRESIGNED \(Hex.encode([UInt8](presignature.id)))")
    default:
        guard let message = try? Hex.decode(option("message")) else { fail("message") }
        guard let presignature = try await session.preSignatures(keyshare: keyshare).first else { fail("no presignature") }
        let signature = try await session.preSignatureFinal(preSignature: presignature, message: Data(message))
        print("SIGNED \(Hex.encode([UInt8](presignature.id))) \(Hex.encode(message)) \(Hex.encode([UInt8](signature.rawRepresentation) + (signature.recoveryId.map { [$0] } ?? [])))")
    }
    fflush(nil)
    exit(0)
} catch {
    fail("\(error)")
}
