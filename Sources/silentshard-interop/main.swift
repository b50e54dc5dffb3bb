// silentshard-interop: a JSON-in/JSON-out oracle over MPCCrypto for the Python interop tests in
// interop/. Reads one request from stdin, `{"op": "secp256k1", "cases": [...]}`, writes one response
// to stdout, `{"results": [...]}` (one result per case, `{"error": name, "detail": ...}` for a case
// that failed) or `{"error": ..., "detail": ...}` with exit status 1 for a malformed request.
// Bytes travel as hex. See interop/README.md for every operation's fields.
import Foundation

let input = FileHandle.standardInput.readDataToEndOfFile()
let (response, status) = Request.respond(to: input)
FileHandle.standardOutput.write(Request.encode(response))
exit(status)
