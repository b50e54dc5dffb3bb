import Foundation
import MPCCrypto
@testable import MPCProtocols

/// Test vectors live in the package's own `vectors/frost-ed25519` (copied from the team's shared vectors;
/// a fresh clone is self-contained).
enum FROSTVectors {
    static var directory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("vectors/frost-ed25519")
    }

    static func load(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw VectorError.shape(name)
        }
        return object
    }

    enum VectorError: Error { case shape(String) }
}

func frostHex(_ value: Any?) throws -> [UInt8] {
    guard let text = value as? String else { throw FROSTVectors.VectorError.shape("not a string") }
    return try Hex.decode(text)
}

func frostScalar(_ value: Any?) throws -> Ed25519.Scalar { try Ed25519.Scalar(bytes: frostHex(value)) }
func frostPoint(_ value: Any?) throws -> Ed25519.Point { try Ed25519.Point(bytes: frostHex(value)) }

func frostInt(_ value: Any?) throws -> UInt32 {
    if let n = value as? Int { return UInt32(n) }
    if let s = value as? String, let n = UInt32(s) { return n }
    throw FROSTVectors.VectorError.shape("not an integer")
}

func frostIdentifier(_ value: Any?) throws -> FROST.Identifier {
    guard let id = FROST.Identifier(value: try frostInt(value)) else { throw FROSTVectors.VectorError.shape("zero id") }
    return id
}
