import Foundation

/// One accepted connection of a node step — the app's, or at trio's B the link from A — as the server
/// hands it to the session layer: binary messages in and out, then a close. The WebSocket server
/// implements it; tests use an in-memory pipe. The server handles the optional token message (session.md §2.1)
/// before handing the connection over.
package protocol NodeStepConnection: Sendable {
    /// The next binary message from the other end.
    func read() async throws -> Data
    /// Sends one binary message (a bundle of frames).
    func send(_ data: Data) async throws
    /// Closes the connection with a WebSocket close code (session.md §2.1: 1000 done, 1002 malformed, 1008 REJECT,
    /// 1011 internal).
    func close(code: UInt16, reason: String) async
}
