import Foundation

/// An EIP-712 struct type or member name, compared, hashed and ordered by its UTF-8 bytes. Every internal
/// map of typed data is keyed by it, never by `String`: Swift `String`s compare by Unicode canonical
/// equivalence (U+212A KELVIN SIGN equals `K`, U+037E GREEK QUESTION MARK equals `;`, U+1FEF GREEK VARIA
/// equals `` ` ``), so two spellings that other EIP-712 implementations (eth-account, eth-sig-util) keep
/// apart would otherwise share one slot, and one of the two values would be signed in place of the other.
/// Names from outside are made with `init(validating:at:)`, which takes only ASCII identifiers (so the public
/// `[String: …]` dictionaries of a built document hold ASCII keys only, which cannot fold either).
struct TypedDataName: Hashable, Comparable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    /// `text` if it is an identifier (`TypedDataText.isIdentifier`); `ChainError.invalidTypedDataName` at
    /// `path` otherwise.
    init(validating text: String, at path: @autoclosure () -> String) throws(ChainError) {
        guard TypedDataText.isIdentifier(text) else { throw TypedDataText.badName(text, at: path()) }
        bytes = Array(text.utf8)
    }

    /// `text`'s bytes as they are, for a lookup: a name that is not an identifier finds nothing.
    init(lookingUp text: String) { bytes = Array(text.utf8) }

    var text: String { String(decoding: bytes, as: UTF8.self) }
    var description: String { text }

    /// Byte-wise order (the order of the EIP's reference code for ASCII names).
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    /// `dictionary` keyed by name, every key checked first (`invalidTypedDataName` at `path` for the first, by
    /// bytes, that is not an identifier).
    static func keyed<Value>(_ dictionary: [String: Value], at path: @autoclosure () -> String) throws(ChainError) -> [TypedDataName: Value] {
        if let bad = dictionary.keys.filter({ !TypedDataText.isIdentifier($0) }).min(by: TypedDataText.precedes) {
            throw TypedDataText.badName(bad, at: path())
        }
        var keyed: [TypedDataName: Value] = [:]
        for (key, value) in dictionary { keyed[TypedDataName(lookingUp: key)] = value }
        return keyed
    }
}
