#if canImport(os)
import os

extension SilentShardLoggers {
    /// Writes each event to the unified log (`os.Logger`, subsystem `subsystem`, category "SilentShard");
    /// every field is public: events hold no secrets. Failures log at `.error`, the rest at `.debug`/`.info`.
    public static func unifiedLog(subsystem: String) -> any SilentShardLogger {
        UnifiedLogLogger(logger: Logger(subsystem: subsystem, category: "SilentShard"))
    }

    struct UnifiedLogLogger: SilentShardLogger {
        let logger: Logger

        func record(_ event: SilentShardEvent) {
            let line = event.description
            switch (event.phase, event.errorKind) {
            case (_, .some): logger.error("\(line, privacy: .public)")
            case (.stepFinished, nil): logger.debug("\(line, privacy: .public)")
            default: logger.info("\(line, privacy: .public)")
            }
        }
    }
}
#endif
