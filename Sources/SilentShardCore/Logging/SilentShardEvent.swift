import Foundation

/// What the SDK tells an app's `SilentShardLogger`: operations starting and ending, and each step (one
/// connection) in between, with bytes, durations and the kind of error. Events never carry secrets,
/// tokens, messages or signatures — only names, the key id (public: the hash of a public key), counts
/// and durations.
public struct SilentShardEvent: Sendable, Equatable {
    /// Where in an operation the event comes from.
    public enum Phase: Sendable, Equatable {
        /// A public operation (`keygen`, `signature`, `preSignatureFinal`, …) began.
        case operationStarted
        /// One step (one connection to the nodes, or one POST) ended, successfully or not.
        case stepFinished
        /// The operation ended; `errorKind` is nil when it succeeded.
        case operationFinished
    }

    /// Where in the operation this event comes from.
    public let phase: Phase
    /// The operation's name (`keygen`, `refresh`, `sign`, `import`, `reconcile`, `preSign`,
    /// `preSignFinal`, `recover`, `hardDerivation`, `export`, `backup`, `restoreBackup`); for a step, the
    /// step's own operation (a refresh may run a `reconcile` step first).
    public let operation: String
    /// Duo or trio.
    public let mode: Keyshare.Mode
    /// ECDSA (DKLs23) or EdDSA (FROST).
    public let algorithm: Keyshare.Algorithm
    /// The key the operation works on, when known (nil for keygen and import until they finish).
    public let keyId: String?
    /// Bytes the app sent: the step's, or the whole operation's.
    public let bytesSent: Int
    /// Bytes the app received: the step's, or the whole operation's.
    public let bytesReceived: Int
    /// The step's or the operation's duration (nil for `operationStarted`).
    public let duration: Duration?
    /// The failure's kind (`SilentShardError.kind`: a case name such as `timeout` or
    /// `network.connectionLost`), nil on success.
    public let errorKind: String?

    /// An event with these fields (for tests and for loggers that forward events).
    public init(phase: Phase, operation: String, mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, keyId: String?,
                bytesSent: Int = 0, bytesReceived: Int = 0, duration: Duration? = nil, errorKind: String? = nil) {
        self.phase = phase
        self.operation = operation
        self.mode = mode
        self.algorithm = algorithm
        self.keyId = keyId
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.duration = duration
        self.errorKind = errorKind
    }
}

extension SilentShardEvent: CustomStringConvertible {
    /// One line: `<mode> <algorithm> <operation> <phase> key=… sent=… received=… ms=… error=…`.
    public var description: String { line(includingKey: true) }

    /// The one-line form, with or without the key id (the unified log records it apart, hashed).
    func line(includingKey: Bool) -> String {
        var line = "\(mode) \(algorithm) \(operation) "
        switch phase {
        case .operationStarted: line += "started"
        case .stepFinished: line += "step"
        case .operationFinished: line += errorKind == nil ? "finished" : "failed"
        }
        if includingKey, let keyId { line += " key=\(keyId.prefix(16))…" }
        if phase != .operationStarted { line += " sent=\(bytesSent) received=\(bytesReceived)" }
        if let duration {
            let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
            line += " ms=" + String(format: "%.1f", milliseconds)
        }
        if let errorKind { line += " error=\(errorKind)" }
        return line
    }
}

/// Receives the SDK's events (`DuoSession.logger`, `TrioSession.logger`). Called on the operation's
/// task, synchronously: return quickly (hand the event to a queue for slow sinks). The default is
/// `SilentShardLoggers.none`.
public protocol SilentShardLogger: Sendable {
    /// Takes one event; must not block for long.
    func record(_ event: SilentShardEvent)
}

/// The built-in loggers.
public enum SilentShardLoggers {
    /// Drops every event (the default).
    public static let none: any SilentShardLogger = NoLogger()
    /// Writes each event as one line to standard error (`silentshard … --log` uses it).
    public static let standardError: any SilentShardLogger = StandardErrorLogger()

    struct NoLogger: SilentShardLogger {
        func record(_ event: SilentShardEvent) {}
    }

    struct StandardErrorLogger: SilentShardLogger {
        func record(_ event: SilentShardEvent) {
            FileHandle.standardError.write(Data(("silentshard: " + event.description + "\n").utf8))
        }
    }
}
