import Foundation

/// Operation and step events for the app's `SilentShardLogger` (`Logging/`).
extension AppSession {
    /// The app's logger.
    package var logger: any SilentShardLogger {
        get { events.logger }
        set { events.logger = newValue }
    }

    /// The `observed` below for an operation step, under the operation's event name.
    package func observed<T>(_ operation: SessionOperation, keyId: String?,
                             _ body: () async throws(SilentShardError) -> T) async throws(SilentShardError) -> T {
        try await observed(operation.eventName, keyId: keyId, body)
    }

    /// Runs the public operation `operation` on `keyId` (nil until known), telling the logger when it
    /// starts and how it ended: duration, the bytes of all its steps, the error's kind.
    package func observed<T>(_ operation: String, keyId: String?,
                             _ body: () async throws(SilentShardError) -> T) async throws(SilentShardError) -> T {
        let tally = ByteTally()
        events.emit(SilentShardEvent(phase: .operationStarted, operation: operation, mode: mode, algorithm: algorithm, keyId: keyId))
        let start = ContinuousClock.now
        let result: Result<T, SilentShardError>
        do {
            result = .success(try await ByteTally.$current.withValue(tally) { () async throws -> T in try await body() })
        } catch let error as SilentShardError {
            result = .failure(error)
        } catch {
            result = .failure(.cancelled)
        }
        let finishedKeyId: String? = switch result {
        case .success(let value): (value as? Keyshare)?.keyId ?? keyId
        case .failure: keyId
        }
        events.emit(SilentShardEvent(phase: .operationFinished, operation: operation, mode: mode, algorithm: algorithm,
                                     keyId: finishedKeyId, bytesSent: tally.sent, bytesReceived: tally.received,
                                     duration: ContinuousClock.now - start, errorKind: result.failureKind))
        return try result.get()
    }

    /// Tells the logger about a step that was one HTTP POST (trio's preSignFinal, duo's export).
    package func recordPost(_ operation: SessionOperation, keyId: String?, sent: Int, received: Int, duration: Duration,
                            error: SilentShardError?) {
        ByteTally.current?.add(sent: sent, received: received)
        events.emit(SilentShardEvent(phase: .stepFinished, operation: operation.eventName, mode: mode, algorithm: algorithm,
                                     keyId: keyId, bytesSent: sent, bytesReceived: received, duration: duration,
                                     errorKind: error?.kind))
    }
}

extension Result where Failure == SilentShardError {
    var failureKind: String? { failureKindError?.kind }

    var failureKindError: SilentShardError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension SessionOperation {
    /// The operation's name in events (its table row's name).
    package var eventName: String { name }
}
