import Foundation
import MPCCrypto
import SilentShardChains
import Testing

/// Issue 32, finding 2: EIP-712 names (type names, `primaryType`, member names, the keys of `domain`, `message`
/// and nested struct values) must be ASCII identifiers, checked before they are looked up or stored: Swift
/// `String`s compare by Unicode canonical equivalence (U+212A KELVIN SIGN equals `K`, U+037E GREEK QUESTION
/// MARK equals `;`, U+1FEF GREEK VARIA equals `` ` ``), so a key that other EIP-712 implementations
/// (eth-account, eth-sig-util) keep apart from its ASCII twin would otherwise share its slot here, and the
/// SDK would sign another value than the wallet shows.
@Suite("Ethereum: EIP-712 names are ASCII identifiers (issue 32, finding 2)")
struct EthereumTypedDataNameTests {
    /// A session-key grant: `sessionKey` is the address a wallet shows.
    static let grantTypes = #""EIP712Domain": [{"name": "name", "type": "string"}], "Grant": [{"name": "sessionKey", "type": "address"}, {"name": "expiry", "type": "uint64"}]"#
    static let shown = "0x1111111111111111111111111111111111111111"
    static let hidden = "0x2222222222222222222222222222222222222222"

    /// `message` holds `sessionKey` and, after it, `session\u212Aey`: eth-account and eth-sig-util hash the
    /// declared member's value (`shown`); folded into one `[String: …]` slot, the SDK hashed `hidden`.
    @Test func finding2_kelvinSignMessageKeyIsRefused() throws {
        let json = #"{"types": {\#(Self.grantTypes)}, "primaryType": "Grant", "domain": {"name": "Wallet"}, "message": {"sessionKey": "\#(Self.shown)", "expiry": 1, "session\u212Aey": "\#(Self.hidden)"}}"#
        #expect(throws: ChainError.invalidTypedDataName(path: "message", name: #"session\u{212A}ey"#)) { try EthereumTypedData(json: json) }
        // Without the look-alike key the document is what eth-account 0.14 hashes (encode_typed_data).
        let declared = try EthereumTypedData(json: json.replacingOccurrences(of: #", "session\u212Aey": "\#(Self.hidden)""#, with: ""))
        #expect(declared.message["sessionKey"] == .address(try EthereumAddress(Self.shown)))
        #expect(Hex.encode([UInt8](declared.signingHash)) == "a003493dc1aee1afeae5f3a8f53f8f65d09568dddde318dd504407b1e6ea320c")
    }

    /// `types` defines `Kind` and, after it, `\u212Aind`: the others hash `Kind(uint8 a)`; folded, the SDK
    /// hashed the second definition under the first name.
    @Test func finding2_kelvinSignTypeNameIsRefused() throws {
        let json = #"{"types": {"Grant": [{"name": "kind", "type": "Kind"}], "Kind": [{"name": "a", "type": "uint8"}], "\u212Aind": [{"name": "a", "type": "uint256"}]}, "primaryType": "Grant", "domain": {}, "message": {"kind": {"a": 1}}}"#
        #expect(throws: ChainError.invalidTypedDataName(path: "types", name: #"\u{212A}ind"#)) { try EthereumTypedData(json: json) }
    }

    /// A member type is a value, not a key, but its struct part (`Kind` in `Kind[2]`) is a name: a look-alike is
    /// a malformed type (compared by bytes, as before).
    @Test func finding2_kelvinSignInAMemberTypeIsMalformed() throws {
        for type in ["\\u212Aind", "\\u212Aind[2]", "\\u212Aind[]"] {
            let json = #"{"types": {"Grant": [{"name": "kind", "type": "\#(type)"}], "Kind": [{"name": "a", "type": "uint8"}]}, "primaryType": "Grant", "domain": {}, "message": {"kind": {"a": 1}}}"#
            let written = type.replacingOccurrences(of: "\\u212A", with: #"\u{212A}"#)   // errors escape non-ASCII
            #expect(throws: ChainError.invalidEncoding(reason: "malformed type \"\(written)\"")) { try EthereumTypedData(json: json) }
        }
    }

    /// `primaryType` `\u212Aind` found the struct `Kind` (the others find no such type).
    @Test func finding2_kelvinSignPrimaryTypeIsRefused() throws {
        let json = #"{"types": {"Kind": [{"name": "a", "type": "uint8"}]}, "primaryType": "\u212Aind", "domain": {}, "message": {"a": 1}}"#
        #expect(throws: ChainError.invalidTypedDataName(path: "primaryType", name: #"\u{212A}ind"#)) { try EthereumTypedData(json: json) }
    }

    /// U+037E (GREEK QUESTION MARK, equal to `;` as a Swift `String`) in a nested struct value's key.
    @Test func finding2_greekQuestionMarkKeyIsRefused() throws {
        let json = #"{"types": {"Outer": [{"name": "inner", "type": "Inner"}], "Inner": [{"name": "a", "type": "uint8"}]}, "primaryType": "Outer", "domain": {}, "message": {"inner": {"a": 1, "a\u037E": 2}}}"#
        #expect(throws: ChainError.invalidTypedDataName(path: "message.inner", name: #"a\u{37E}"#)) { try EthereumTypedData(json: json) }
    }

    /// U+1FEF (GREEK VARIA, equal to `` ` `` as a Swift `String`) in a domain key and a member name.
    @Test func finding2_greekVariaKeyIsRefused() throws {
        let domain = #"{"types": {\#(Self.grantTypes)}, "primaryType": "Grant", "domain": {"name": "Wallet", "name\u1FEF": "x"}, "message": {"sessionKey": "\#(Self.shown)", "expiry": 1}}"#
        #expect(throws: ChainError.invalidTypedDataName(path: "domain", name: #"name\u{1FEF}"#)) { try EthereumTypedData(json: domain) }
        let member = #"{"types": {"T": [{"name": "a\u1FEF", "type": "uint8"}]}, "primaryType": "T", "domain": {}, "message": {}}"#
        #expect(throws: ChainError.invalidTypedDataName(path: "types.T", name: #"a\u{1FEF}"#)) { try EthereumTypedData(json: member) }
    }

    /// Built from Swift values: a message key `session\u{212A}ey` (the only one) found the member
    /// `sessionKey` and was hashed as it.
    @Test func finding2_kelvinSignKeyFromSwiftValuesIsRefused() throws {
        let types: [String: [EthereumTypedData.Field]] = ["Grant": [.init(name: "sessionKey", type: "address")]]
        let address = EthereumTypedData.Value.address(try EthereumAddress(Self.hidden))
        #expect(throws: ChainError.invalidTypedDataName(path: "message", name: #"session\u{212A}ey"#)) {
            try EthereumTypedData(types: types, primaryType: "Grant", domain: [:], message: ["session\u{212A}ey": address])
        }
        #expect(throws: ChainError.invalidTypedDataName(path: "types", name: #"\u{212A}ind"#)) {
            try EthereumTypedData(types: ["\u{212A}ind": []], primaryType: "\u{212A}ind", domain: [:], message: [:])
        }
        let typed = try EthereumTypedData(types: types, primaryType: "Grant", domain: [:], message: ["sessionKey": address])
        #expect(throws: ChainError.invalidTypedDataName(path: "Grant", name: #"session\u{212A}ey"#)) {
            try typed.hashStruct("Grant", ["session\u{212A}ey": address])
        }
        // Public lookups go by bytes: a look-alike of a defined type finds nothing.
        #expect(throws: ChainError.invalidEncoding(reason: #"unknown type "Gr\u{430}nt""#)) { try typed.encodeType("Gr\u{0430}nt") }
        let kind = try EthereumTypedData(types: ["Kind": [.init(name: "a", type: "uint8")]], primaryType: "Kind", domain: [:],
                                         message: ["a": .integer(negative: false, magnitude: 1)])
        #expect(throws: ChainError.invalidEncoding(reason: #"unknown type "\u{212A}ind""#)) { try kind.encodeType("\u{212A}ind") }
        #expect(throws: ChainError.invalidEncoding(reason: #"unknown type "\u{212A}ind""#)) {
            try kind.hashStruct("\u{212A}ind", ["a": .integer(negative: false, magnitude: 1)])
        }
        // Values compare their struct keys by bytes as well.
        #expect(EthereumTypedData.Value.structure(["sessionKey": address]) != .structure(["session\u{212A}ey": address]))
    }

    /// Review of finding 2: the refused name is reported escaped (`\u{…}` for anything outside printable ASCII), so a
    /// document cannot put control or bidi characters into an error's text (a log line, a wallet's error screen).
    @Test func finding2_refusedNamesAreEscapedInErrors() throws {
        let json = #"{"types": {"T": [{"name": "a\n\u202Eb", "type": "uint8"}]}, "primaryType": "T", "domain": {}, "message": {}}"#
        do {
            _ = try EthereumTypedData(json: json)
            Issue.record("accepted")
        } catch {
            let text = String(describing: error)
            #expect(text.contains(#"a\u{A}\u{202E}b"#))
            #expect(!text.unicodeScalars.contains { $0 == "\n" || $0.value == 0x202E })
        }
    }
}
