/// A request the CLI cannot serve: malformed JSON, an unknown operation, a missing or mistyped field.
enum InteropError: Error, Equatable {
    /// The request is not `{"op": String, "cases": [...]}`.
    case badRequest(String)
    /// No operation has this name.
    case unknownOperation(String)
    /// A case lacks a required field.
    case missingField(String)
    /// A field has the wrong JSON type.
    case wrongType(field: String, expected: String)
    /// A field that should be hex is not.
    case invalidHex(field: String)
    /// A field is well-typed but out of the range this CLI accepts.
    case outOfRange(field: String)
}

/// How an error travels back to Python: a stable `error` name and a human-readable `detail`.
enum ErrorReport {
    /// The enum case name of the error, e.g. `"invalidPointEncoding"` or `"invalidLength"`: the text
    /// of `String(describing:)` up to the first parenthesis, so associated values never change it.
    static func name(of error: any Error) -> String {
        // An enum case with associated values reflects as one child labelled with the case name
        // (errors with a custom `description` included); a case without values prints its name.
        if let label = Mirror(reflecting: error).children.first?.label { return label }
        let text = String(describing: error)
        return String(text.prefix { $0 != "(" })
    }

    /// `{"error": name, "detail": description}`.
    static func object(for error: any Error) -> JSONValue {
        .object(["error": .string(name(of: error)), "detail": .string(String(describing: error))])
    }

    /// The bytes `body` produces as hex, or the error object when it throws. For results that may
    /// legitimately fail (the inverse of zero, the encoding of the identity, ...).
    static func outcome(_ body: () throws -> [UInt8]) -> JSONValue {
        do {
            return .hex(try body())
        } catch {
            return object(for: error)
        }
    }
}
