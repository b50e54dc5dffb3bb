import Foundation
import MPCCrypto
import SilentShardCore

/// A sink that seals each keyshare it is offered (KeyshareBackup version 2) and records what the app's
/// storage held at that moment; it fails while `failing` is set.
public final class RecordingBackupSink: BackupSink, @unchecked Sendable {
    public struct Offer: Sendable {
        public let keyshare: Keyshare
        public let blob: Data
        /// The app's record when the sink was called.
        public let record: KeyshareRecord?
    }

    public let storage: any StorageClient
    package let failing = LockedValue(false)
    private let log = LockedValue<[Offer]>([])
    public var offers: [Offer] { log.withLock { $0 } }
    public static let password = "sink password"
    public static let limits = Argon2id.Limits(opsLimit: 1, memLimit: 8 << 20)

    public init(storage: any StorageClient) { self.storage = storage }

    public struct Unavailable: Error {}

    public func storeBackup(of keyshare: Keyshare) async throws {
        let record = try await storage.read(keyId: keyshare.keyId)
        let blob = try KeyshareBackup.seal(keyshare, password: RecordingBackupSink.password, limits: Self.limits)
        log.withLock { $0.append(Offer(keyshare: keyshare, blob: blob, record: record)) }
        if failing.withLock({ $0 }) { throw Unavailable() }
    }
}
