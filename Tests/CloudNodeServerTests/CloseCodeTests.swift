@testable import CloudNode
import Foundation
import SilentShardCore
import SilentShardTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Security review (fixed while there): a close frame with a code no endpoint may send (5000, 65535,
/// 1005, 1006, 999) was echoed unchanged; RFC 6455 §7.4 asks for 1002.
@Suite("Close codes: an invalid code from the client is answered with 1002", .timeLimit(.minutes(30)))
struct CloseCodeTests {
    /// Upgrades a raw socket, sends a masked close frame with `code`, and returns the code of the
    /// node's close frame (nil if none arrived).
    static func closeAnswer(port: Int, code: UInt16) throws -> UInt16? {
        guard let (fd, _) = LoopbackSocket.upgrade(port: port) else { throw NetworkError.connectionLost }
        defer { close(fd) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func fill(until done: ([UInt8]) -> Bool) {
            while !done(received) {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                received += buffer[..<count]
            }
        }
        // FIN + close, masked, 2-byte payload, mask key 0.
        let frame: [UInt8] = [0x88, 0x82, 0, 0, 0, 0, UInt8(code >> 8), UInt8(code & 0xFF)]
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        fill { $0.count >= 4 }
        guard received.count >= 4, received[0] == 0x88, received[1] & 0x7F >= 2 else { return nil }
        return UInt16(received[2]) << 8 | UInt16(received[3])
    }

    @Test func invalidCodesAreAnsweredWith1002() async throws {
        let node = try TestNode.start()
        for code: UInt16 in [5000, 65535, 1005, 1006, 1015, 999, 2000] {
            #expect(try Self.closeAnswer(port: node.port, code: code) == 1002, "code \(code)")
        }
        for code: UInt16 in [1000, 1001, 4000] {
            #expect(try Self.closeAnswer(port: node.port, code: code) == code, "code \(code)")
        }
        await node.server.stop()
    }

    @Test func validCodes() {
        for code: UInt16 in [1000, 1003, 1007, 1011, 1014, 3000, 4999] { #expect(LWSEngine.isValidReceivedCloseCode(code)) }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] { #expect(!LWSEngine.isValidReceivedCloseCode(code)) }
    }
}
