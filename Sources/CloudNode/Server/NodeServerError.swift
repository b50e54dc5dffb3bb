/// Failures of the node server and of its connections. Never carries tokens, keys or message bytes.
package enum NodeServerError: Error, Sendable, Equatable {
    /// The listen address is not `HOST:PORT` with an IPv4/IPv6 literal or `localhost`.
    case invalidListenAddress(String)
    /// libwebsockets could not create its context or listening socket (address in use, bad TLS files…).
    case startFailed(reason: String)
    /// `start` was called on a server that is running or stopped.
    case alreadyStarted
    /// The connection is closed; `code` is the close code when one was sent or received.
    case connectionClosed(code: UInt16?)
    /// The peer did not send within the allowed time.
    case timeout
    /// A text message arrived after the first message (session.md §2.1).
    case unexpectedText
    /// A message exceeded the configured maximum size.
    case messageTooLarge(limit: Int)
    /// A send was larger than the configured maximum size.
    case sendTooLarge(limit: Int)
    /// The configuration is invalid (the reason names the setting, never its secret value).
    case invalidConfiguration(String)
}
