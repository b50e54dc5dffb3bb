#if canImport(os)
import os

extension SilentShardLoggers {
    /// Writes each event to the unified log (`os.Logger`, subsystem `subsystem`, category "SilentShard").
    /// Events hold no secrets; every field is public except the key id, which links entries to a wallet
    /// and is logged as a private hash. Failures log at `.error`, the rest at `.debug`/`.info`.
    public static func unifiedLog(subsystem: String) -> any SilentShardLogger {
        UnifiedLogLogger(logger: Logger(subsystem: subsystem, category: "SilentShard"))
    }

    struct UnifiedLogLogger: SilentShardLogger {
        let logger: Logger

        func record(_ event: SilentShardEvent) {
            let line = event.line(includingKey: false), key = event.keyId ?? "-"
            switch (event.phase, event.errorKind) {
            case (_, .some): logger.error("\(line, privacy: .public) key=\(key, privacy: .private(mask: .hash))")
            case (.stepFinished, nil): logger.debug("\(line, privacy: .public) key=\(key, privacy: .private(mask: .hash))")
            default: logger.info("\(line, privacy: .public) key=\(key, privacy: .private(mask: .hash))")
            }
        }
    }
}
#endif
