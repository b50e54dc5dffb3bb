import Foundation

/// A small JSON value for the CLI's machine-readable output (sorted keys, no secrets).
enum JSONValue: Sendable {
    case string(String)
    case number(Double)
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
