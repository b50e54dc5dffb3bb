import Foundation

/// One request, `{"op": String, "cases": [...]}`, and its handling from bytes to bytes.
enum Request {
    /// Request-level failures exit with this status (after writing a JSON error).
    static let failureStatus: Int32 = 1

    /// Serves the request in `input` and returns the response document and the exit status.
    /// Never traps: every failure becomes `{"error": name, "detail": ...}`.
    static func respond(to input: Data) -> (response: JSONValue, status: Int32) {
        do {
            let (operation, cases) = try parse(input)
            let results = try Operations.run(operation: operation, cases: cases)
            return (.object(["results": .array(results)]), 0)
        } catch {
            return (ErrorReport.object(for: error), failureStatus)
        }
    }

    /// Decodes the envelope.
    static func parse(_ input: Data) throws(InteropError) -> (operation: String, cases: [JSONValue]) {
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: input)
        } catch {
            throw .badRequest("not a JSON document: \(error)")
        }
        guard case .string(let operation)? = document["op"] else {
            throw .badRequest("expected {\"op\": String, \"cases\": [...]}")
        }
        guard case .array(let cases)? = document["cases"] else {
            throw .badRequest("expected \"cases\" to be an array")
        }
        return (operation, cases)
    }

    /// The response as compact JSON with sorted keys and a final newline.
    static func encode(_ response: JSONValue) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSONValue (strings, integers, booleans, containers) cannot fail.
        var data = (try? encoder.encode(response)) ?? Data(#"{"error":"encodingFailed"}"#.utf8)
        data.append(0x0A)
        return data
    }
}
