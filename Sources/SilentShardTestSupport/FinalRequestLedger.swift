import Foundation
import MPCCrypto
import SilentShardCore

/// Every FINAL_REQUEST an app sent, per presignature id (the header's instance id) — the property a
/// malicious node would exploit is "two different requests for one presignature", which an honest node's
/// answers cannot reveal (it refuses the second); tests assert it on the app's side with this ledger.
public final class FinalRequestLedger: @unchecked Sendable {
    private let requests = LockedValue<[Data: Set<Data>]>([:])

    public init() {}

    /// Records `body` if it is a FINAL_REQUEST frame (anything else is ignored).
    public func record(_ body: Data) {
        let bytes = [UInt8](body)
        guard let header = try? FrameHeader.decode(bytes.prefix(FrameHeader.byteCount)), header.kind == .finalRequest else { return }
        _ = requests.withLock { $0[Data(header.instanceID.bytes), default: []].insert(Data(SHA256.hash(bytes))) }
    }

    /// Records a request already reduced to its presignature id and SHA-256 (e.g. reported by a child process).
    public func record(presignatureId: Data, requestHash: Data) {
        _ = requests.withLock { $0[presignatureId, default: []].insert(requestHash) }
    }

    /// How many distinct requests were sent per presignature id.
    public var distinctRequestCounts: [Data: Int] { requests.withLock { $0.mapValues(\.count) } }

    /// Whether no presignature was ever sent two different requests.
    public var eachPresignatureHadOneRequest: Bool { requests.withLock { $0.values.allSatisfy { $0.count == 1 } } }
}

/// A `NetworkClient` that forwards everything to `inner` and records each POST body in `ledger` first.
public final class LedgerRecordingClient: NetworkClient, @unchecked Sendable {
    public let inner: any NetworkClient
    public let ledger: FinalRequestLedger

    public init(inner: any NetworkClient, ledger: FinalRequestLedger = FinalRequestLedger()) {
        self.inner = inner
        self.ledger = ledger
    }

    public func connect(action: NetworkAction, params: String?) async throws { try await inner.connect(action: action, params: params) }
    public func send(bytes: Data) async throws { try await inner.send(bytes: bytes) }
    public func send(text: String) async throws { try await inner.send(text: text) }
    public func read() async throws -> Data { try await inner.read() }
    public func disconnect() async throws { try await inner.disconnect() }
    public func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        ledger.record(body)
        return try await inner.sendPostRequest(action: action, params: params, body: body)
    }
}
