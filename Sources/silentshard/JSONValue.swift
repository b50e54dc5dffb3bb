import Foundation

/// A small JSON value for the CLI's machine-readable output (sorted keys, no secrets).
enum JSONValue: Sendable {
    case string(String)
    case number(Double)
    /// An exact integer of any size, written as its decimal digits (optional leading `-`): fees and
    /// amounts above 2^53 that a `Double` would round.
    case integer(String)
    /// A JSON document serialized elsewhere (e.g. an EIP-712 document's own writer), embedded as is.
    case raw(String)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    var serialized: String {
        switch self {
        case .string(let text):
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        case .number(let value):
            return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3f", value)
        case .integer(let digits):
            return digits
        case .raw(let text):
            return text
        case .bool(let value):
            return value ? "true" : "false"
        case .null:
            return "null"
        case .array(let values):
            return "[" + values.map(\.serialized).joined(separator: ", ") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { "\(JSONValue.string($0).serialized): \(members[$0]?.serialized ?? "null")" }
                .joined(separator: ", ") + "}"
        }
    }
}
