import Testing
@testable import CloudNode
import SilentShardCore

/// Issue 34 item 3: the stored presignature secret has one codec in the store layer; its use sites parse no offsets.
@Suite("StoredPresignatureSecret: the codec of the node's stored presignature half")
struct StoredPresignatureSecretTests {
    static let request = [UInt8](repeating: 0x11, count: 32)
    static let response = [UInt8](repeating: 0x22, count: 32)

    static func dkls() throws -> StoredPresignatureSecret {
        try StoredPresignatureSecret(requestKey: request, responseKey: response, half: .dkls(presignature: [1, 2, 3, 4, 5]))
    }

    static func frost(path: [UInt8] = [0, 0, 0, 3, 0, 0, 0, 7]) throws -> StoredPresignatureSecret {
        try StoredPresignatureSecret(requestKey: request, responseKey: response,
                                     half: .frost(path: path, appRound1: [UInt8](repeating: 9, count: 64), nonces: [7, 7, 7]))
    }

    @Test("issue 34 item 3: ECDSA and EdDSA secrets round-trip, in the layout the node has always stored")
    func issue34_item3_secretRoundTrips() throws {
        let dkls = try Self.dkls()
        #expect(dkls.encoded == [1] + Self.request + Self.response + [1, 2, 3, 4, 5])
        #expect(try StoredPresignatureSecret(bytes: dkls.encoded).encoded == dkls.encoded)
        for path: [UInt8] in [[], [0, 0, 0, 3, 0, 0, 0, 7]] {
            let frost = try Self.frost(path: path)
            let expected: [UInt8] = [2] + Self.request + Self.response + [0, UInt8(path.count)] + path
                + [UInt8](repeating: 9, count: 64) + [7, 7, 7]
            #expect(frost.encoded == expected)
            #expect(try StoredPresignatureSecret(bytes: frost.encoded).encoded == frost.encoded)
        }
        #expect(!String(describing: dkls).contains("17"), "no secret bytes in the description")
        #expect(String(reflecting: try Self.frost()) == "StoredPresignatureSecret(EdDSA, redacted)")
    }

    @Test("issue 34 item 3: truncated, wrong-length and wrong-version bytes are typed errors, never a trap",
          arguments: [
            ([UInt8](), StoredPresignatureSecret.DecodingError.truncated),
            ([1], .truncated),
            ([1] + [UInt8](repeating: 0, count: 64), .truncated),   // the keys, no half
            ([2] + [UInt8](repeating: 0, count: 64) + [0], .truncated),   // no u16 path length
            ([2] + [UInt8](repeating: 0, count: 64) + [0, 8, 1, 2], .truncated),   // a path longer than the body
            ([2] + [UInt8](repeating: 0, count: 64) + [0, 0] + [UInt8](repeating: 9, count: 64), .truncated),   // no nonces
            ([2] + [UInt8](repeating: 0, count: 64) + [0xFF, 0xFF] + [UInt8](repeating: 9, count: 70), .truncated),
            ([0] + [UInt8](repeating: 0, count: 80), .unknownVersion(0)),
            ([3] + [UInt8](repeating: 0, count: 80), .unknownVersion(3)),
            ([0xFF], .unknownVersion(0xFF)),
          ])
    func issue34_item3_badSecretBytesAreTypedErrors(bytes: [UInt8], expected: StoredPresignatureSecret.DecodingError) {
        #expect(throws: expected) { try StoredPresignatureSecret(bytes: bytes) }
    }

    @Test("issue 34 item 3: a secret with keys or a half of the wrong length is not built")
    func issue34_item3_wrongLengthsAreRefused() {
        #expect(throws: StoredPresignatureSecret.DecodingError.wrongLength) {
            try StoredPresignatureSecret(requestKey: [1], responseKey: Self.response, half: .dkls(presignature: [1]))
        }
        #expect(throws: StoredPresignatureSecret.DecodingError.wrongLength) {
            try StoredPresignatureSecret(requestKey: Self.request, responseKey: Self.response, half: .dkls(presignature: []))
        }
        #expect(throws: StoredPresignatureSecret.DecodingError.wrongLength) {
            try StoredPresignatureSecret(requestKey: Self.request, responseKey: Self.response,
                                         half: .frost(path: [], appRound1: [1, 2], nonces: [1]))
        }
    }
}
