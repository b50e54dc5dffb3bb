// The app's keyshare's identifiers as the session layer's types.

import Foundation

extension Keyshare {
    /// The key id, typed (32 bytes: the protocol keyshare's, validated when it was made or decoded).
    package var keyID: KeyID { KeyID(checked: keyIdBytes) }
    /// The generation, typed (32 bytes, as `generation`).
    package var gen: Generation { Generation(checked: [UInt8](generation)) }
}
