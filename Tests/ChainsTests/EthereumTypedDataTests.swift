import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardChains
import SilentShardCore
import Testing

/// EIP-712 typed data (`eth_signTypedData_v4`): the EIP's own Mail/Person example and MetaMask's v4 array
/// example as known answers, an eth-account known answer for arrays, nested arrays, negative integers and
/// `bytesN` edges, strict refusals (each its own `ChainError`), JSON round trips, and threshold signing.
/// `interop/test_chains.py` checks random documents against eth-account.
@Suite("Ethereum: EIP-712 typed data")
struct EthereumTypedDataTests {
    static func hex(_ data: Data) -> String { Hex.encode([UInt8](data)) }

    /// The EIP's example (<https://eips.ethereum.org/EIPS/eip-712>, its `assets/eip-712/Example.js` at
    /// ethereum/EIPs commit 68b7c485a712511a095e134d84b21217b0eb5a04).
    static let mail = """
        {"types": {
           "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                            {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
           "Person": [{"name": "name", "type": "string"}, {"name": "wallet", "type": "address"}],
           "Mail": [{"name": "from", "type": "Person"}, {"name": "to", "type": "Person"}, {"name": "contents", "type": "string"}]},
         "primaryType": "Mail",
         "domain": {"name": "Ether Mail", "version": "1", "chainId": 1, "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
         "message": {"from": {"name": "Cow", "wallet": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
                     "to": {"name": "Bob", "wallet": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},
                     "contents": "Hello, Bob!"}}
        """

    /// The example's signer: keccak256("cow").
    static func cow() throws -> Secp256k1.Scalar { try Secp256k1.Scalar(bytes: Keccak256.hash(Array("cow".utf8))) }

    @Test func theEIPsMailExample() async throws {
        let typed = try EthereumTypedData(json: Self.mail)
        #expect(try typed.encodeType("Mail") == "Mail(Person from,Person to,string contents)Person(string name,address wallet)")
        #expect(Self.hex(try typed.typeHash("Mail")) == "a0cedeb2dc280ba39b857546d74f5549c3a1d7bdc2dd96bf881f76108e23dac2")
        #expect(Self.hex(try typed.encodeData("Mail", typed.message)) == "a0cedeb2dc280ba39b857546d74f5549c3a1d7bdc2dd96bf881f76108e23dac2"
            + "fc71e5fa27ff56c350aa531bc129ebdf613b772b6604664f5d8dbe21b85eb0c8"
            + "cd54f074a4af31b4411ff6a60c9719dbd559c221c8ac3492d9d872b041d703d1"
            + "b5aadf3154a261abdd9086fc627b61efca26ae5702701d05cd2305f7c52a2fc8")
        #expect(Self.hex(typed.messageHash) == "c52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e")
        #expect(Self.hex(try typed.hashStruct("Mail", typed.message)) == Self.hex(typed.messageHash))
        #expect(Self.hex(typed.domainSeparator) == "f2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f")
        #expect(try typed.hashStruct("EIP712Domain", typed.domain) == typed.domainSeparator)
        #expect(Self.hex(typed.signingHash) == "be609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")

        // The example's signature (RFC 6979, as ethereumjs-util signs): v = 28, and its r and s.
        let key = try Self.cow()
        let publicKey = Data(try Secp256k1.Point(base: key).compressed())
        let signature = try await typed.sign(publicKey: publicKey) {
            Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8]($0), privateKey: key))
        }
        #expect(signature.rsv.last == 28)
        #expect(Self.hex(signature.r) == "4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d")
        #expect(Self.hex(signature.s) == "07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b91562")
        #expect(try typed.recoverAddress(signature: signature).checksummed == "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826")
    }

    /// The same example built from Swift values is the same document.
    @Test func builtFromValues() throws {
        func person(_ name: String, _ wallet: String) throws -> EthereumTypedData.Value {
            .structure(["name": .string(name), "wallet": .address(try EthereumAddress(wallet))])
        }
        let typed = try EthereumTypedData(
            types: [
                "EIP712Domain": [.init(name: "name", type: "string"), .init(name: "version", type: "string"),
                                 .init(name: "chainId", type: "uint256"), .init(name: "verifyingContract", type: "address")],
                "Person": [.init(name: "name", type: "string"), .init(name: "wallet", type: "address")],
                "Mail": [.init(name: "from", type: "Person"), .init(name: "to", type: "Person"), .init(name: "contents", type: "string")],
            ],
            primaryType: "Mail",
            domain: ["name": .string("Ether Mail"), "version": .string("1"), "chainId": .integer(negative: false, magnitude: 1),
                     "verifyingContract": .address(try EthereumAddress("0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"))],
            message: ["from": try person("Cow", "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"),
                      "to": try person("Bob", "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"), "contents": .string("Hello, Bob!")])
        #expect(typed == (try EthereumTypedData(json: Self.mail)))
        #expect(Self.hex(typed.signingHash) == "be609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")
    }

    /// MetaMask's v4 example with arrays of addresses and of structs, and an unused type (`Group`):
    /// MetaMask/eth-sig-util `test/index.ts`, test 'signedTypeData_v4', at commit
    /// 97caab50a98262b0ad01b21e1d0a52091b1bae5e.
    @Test func metaMasksArrayExample() async throws {
        let typed = try EthereumTypedData(json: """
            {"types": {
               "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                                {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
               "Person": [{"name": "name", "type": "string"}, {"name": "wallets", "type": "address[]"}],
               "Mail": [{"name": "from", "type": "Person"}, {"name": "to", "type": "Person[]"}, {"name": "contents", "type": "string"}],
               "Group": [{"name": "name", "type": "string"}, {"name": "members", "type": "Person[]"}]},
             "domain": {"name": "Ether Mail", "version": "1", "chainId": 1, "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
             "primaryType": "Mail",
             "message": {"from": {"name": "Cow", "wallets": ["0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826", "0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF"]},
                         "to": [{"name": "Bob", "wallets": ["0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB",
                                 "0xB0BdaBea57B0BDABeA57b0bdABEA57b0BDabEa57", "0xB0B0b0b0b0b0B000000000000000000000000000"]}],
                         "contents": "Hello, Bob!"}}
            """)
        #expect(try typed.encodeType("Group") == "Group(string name,Person[] members)Person(string name,address[] wallets)")
        #expect(Self.hex(try typed.typeHash("Person")) == "fabfe1ed996349fc6027709802be19d047da1aa5d6894ff5f6486d92db2e6860")
        #expect(try typed.encodeType("Mail") == "Mail(Person from,Person[] to,string contents)Person(string name,address[] wallets)")
        #expect(Self.hex(try typed.typeHash("Mail")) == "4bd8a9a2b93427bb184aca81e24beb30ffa3c747e2a33d4225ec08bf12e2e753")
        guard case .structure(let from)? = typed.message["from"], case .array(let to)? = typed.message["to"],
              case .structure(let bob)? = to.first else { Issue.record("message shape"); return }
        #expect(Self.hex(try typed.hashStruct("Person", from)) == "9b4846dd48b866f0ac54d61b9b21a9e746f921cefa4ee94c4c0a1c49c774f67f")
        #expect(Self.hex(try typed.hashStruct("Person", bob)) == "efa62530c7ae3a290f8a13a5fc20450bdb3a6af19d9d9d2542b5a94e631a9168")
        #expect(Self.hex(try typed.encodeData("Mail", typed.message)) == "4bd8a9a2b93427bb184aca81e24beb30ffa3c747e2a33d4225ec08bf12e2e753"
            + "9b4846dd48b866f0ac54d61b9b21a9e746f921cefa4ee94c4c0a1c49c774f67f"
            + "ca322beec85be24e374d18d582a6f2997f75c54e7993ab5bc07404ce176ca7cd"
            + "b5aadf3154a261abdd9086fc627b61efca26ae5702701d05cd2305f7c52a2fc8")
        #expect(Self.hex(typed.messageHash) == "eb4221181ff3f1a83ea7313993ca9218496e424604ba9492bb4052c03d5c3df8")
        #expect(Self.hex(typed.domainSeparator) == "f2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f")
        #expect(Self.hex(typed.signingHash) == "a85c2e2b118698e88db68a8105b794a8cc7cec074e89ef991cb4f5f533819cc2")
        let key = try Self.cow()
        let signature = try await typed.sign(publicKey: Data(try Secp256k1.Point(base: key).compressed())) {
            Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8]($0), privateKey: key))
        }
        #expect(Self.hex(signature.rsv) == "65cbd956f2fae28a601bebc9b906cea0191744bd4c4247bcd27cd08f8eb6b71c"
            + "78efdf7a31dc9abee78f492292721f362d296cf86b4538e07b51303b67f749061b")
    }

    /// Arrays of integers (decimal and hex strings, the uint256 maximum), nested arrays of int8 at both
    /// ends of the range, a fixed array of strings (escapes, a surrogate pair), an array of structs with
    /// int24 extremes, an empty array of structs, empty `bytes`, `bytes1`/`bytes31`, the int256 minimum,
    /// a domain with `salt` and without `version`. Known answers from eth-account 0.14.0
    /// (`encode_typed_data(full_message=…)`, `_hash_eip191_message`).
    static let edges = #"""
        {"types": {"EIP712Domain": [{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"},
                                    {"name": "verifyingContract", "type": "address"}, {"name": "salt", "type": "bytes32"}],
          "Order": [{"name": "maker", "type": "address"}, {"name": "amounts", "type": "uint256[]"}, {"name": "grid", "type": "int8[2][]"},
                    {"name": "tags", "type": "string[2]"}, {"name": "parts", "type": "Part[]"}, {"name": "blob", "type": "bytes"},
                    {"name": "id", "type": "bytes1"}, {"name": "tail", "type": "bytes31"}, {"name": "delta", "type": "int256"},
                    {"name": "flag", "type": "bool"}, {"name": "small", "type": "uint8"}, {"name": "neg", "type": "int16"},
                    {"name": "empty", "type": "Part[]"}],
          "Part": [{"name": "label", "type": "string"}, {"name": "weight", "type": "int24"}, {"name": "key", "type": "bytes32"}]},
         "primaryType": "Order",
         "domain": {"name": "Edge \u2713", "chainId": 11155111, "verifyingContract": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
                    "salt": "0x0000000000000000000000000000000000000000000000000000000000000001"},
         "message": {"maker": "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359",
           "amounts": [0, 1, "115792089237316195423570985008687907853269984665640564039457584007913129639935", "0xff"],
           "grid": [[-128, 127], [0, -1], ["-5", "0x7f"]],
           "tags": ["", "a\"b\\c\n\ud83d\ude00"],
           "parts": [{"label": "first", "weight": -8388608, "key": "0x00000000000000000000000000000000000000000000000000000000000000ff"},
                     {"label": "second", "weight": 8388607, "key": "0xFF00000000000000000000000000000000000000000000000000000000000000"}],
           "blob": "0x", "id": "0xab", "tail": "0x00112233445566778899aabbccddeeff00112233445566778899aabbccddee",
           "delta": "-57896044618658097711785492504343953926634992332820282019728792003956564819968",
           "flag": true, "small": 255, "neg": -300, "empty": []}}
        """#

    @Test func arraysNegativesAndFixedBytes() throws {
        let typed = try EthereumTypedData(json: Self.edges)
        #expect(try typed.encodeType("Order") == "Order(address maker,uint256[] amounts,int8[2][] grid,string[2] tags,Part[] parts,"
            + "bytes blob,bytes1 id,bytes31 tail,int256 delta,bool flag,uint8 small,int16 neg,Part[] empty)"
            + "Part(string label,int24 weight,bytes32 key)")
        #expect(Self.hex(try typed.typeHash("Order")) == "80a23bfb8e813e7d538de975101ff5a712365f3e5988c6c05f1ecf3df5a878d9")
        #expect(Self.hex(try typed.typeHash("Part")) == "1fedfde364483ace51dc773d104f80e4a4001816b1aed882a0229afcb443ea14")
        #expect(Self.hex(typed.domainSeparator) == "a618385b0a14692e2698a9c20e933b2a46c72485866ef2a717248a68d2cbb9e4")
        #expect(Self.hex(typed.messageHash) == "20496072681643e587ee133baf2321d315e5ddbc8228f95c578b2a40915abd31")
        #expect(Self.hex(typed.signingHash) == "e9efba2fcec26f3440926638db1a95266836c497a53c930281acd2b9164e6c3f")

        // The words themselves: -1 as int8 is all ones; bytes1 is left-aligned; bool true is 1.
        let encoded = try typed.encodeData("Order", typed.message)
        #expect(encoded.count == 32 * 14)
        let word = { (index: Int) in Self.hex(encoded.dropFirst(32 * index).prefix(32)) }
        #expect(word(7) == "ab" + String(repeating: "0", count: 62))
        #expect(word(9) == "8" + String(repeating: "0", count: 63))   // int256 minimum
        #expect(word(10) == String(repeating: "0", count: 63) + "1")
        #expect(word(12) == String(repeating: "f", count: 61) + "ed4")   // -300
        #expect(word(13) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")   // keccak256("") for []
    }

    /// The JSON written back is stable (types sorted by name, members as defined) and reads back as the
    /// same document; big integers become decimal strings, small ones numbers, addresses EIP-55.
    @Test func jsonRoundTrip() throws {
        for text in [Self.mail, Self.edges] {
            let typed = try EthereumTypedData(json: text)
            let again = try EthereumTypedData(json: typed.json)
            #expect(again == typed)
            #expect(again.json == typed.json)
            #expect(again.signingHash == typed.signingHash)
        }
        let mail = try EthereumTypedData(json: Self.mail)
        #expect(mail.jsonText.hasPrefix(#"{"types":{"EIP712Domain":[{"name":"name","type":"string"},"#))
        #expect(mail.jsonText.hasSuffix(#""primaryType":"Mail","domain":{"name":"Ether Mail","version":"1","chainId":1,"#
            + #""verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},"message":{"from":{"name":"Cow","#
            + #""wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},"to":{"name":"Bob","#
            + #""wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}}"#))
        let edges = try EthereumTypedData(json: Self.edges).jsonText
        #expect(edges.contains(#""maker":"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359""#))
        #expect(edges.contains(#""amounts":[0,1,"115792089237316195423570985008687907853269984665640564039457584007913129639935",255]"#))
        #expect(edges.contains(#""tags":["","a\"b\\c\n😀"]"#))
        #expect(edges.contains(#""grid":[[-128,127],[0,-1],[-5,127]]"#))
    }

    /// No `EIP712Domain` type and an empty domain: the separator is that of `EIP712Domain()` (MetaMask
    /// adds the empty type); the JSON written back carries it.
    @Test func anEmptyDomain() throws {
        let typed = try EthereumTypedData(json: #"""
            {"types": {"Ping": [{"name": "n", "type": "uint8"}]}, "primaryType": "Ping", "domain": {}, "message": {"n": 1}}
            """#)
        let emptyDomainType = Keccak256.hash(Data("EIP712Domain()".utf8))
        #expect(typed.domainSeparator == Keccak256.hash(emptyDomainType))
        #expect(typed.types["EIP712Domain"] == [])
        #expect(try EthereumTypedData(json: typed.json) == typed)
    }

    /// A threshold key (DKLs23 2-of-2 in process) at a soft path signs through the app's closure; the
    /// signature recovers to the child's address; a closure at another path is caught.
    @Test func signWithAThresholdKey() async throws {
        var rng = DeterministicRandom(seed: 712)
        let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let path = "m/44/60/0/0/3"
        let child = try Keyshare(dkls: shares[0], mode: .duo).childPublicKey(path: path)
        func signer(_ path: String) -> (Data) async throws -> Signature {
            { hash in
                var rng = SystemRandomNumberGenerator()
                return Signature(ecdsa: try DKLsInProcess.sign(shares, messageHash: [UInt8](hash), path: try DerivationPath(path), using: &rng))
            }
        }
        let typed = try EthereumTypedData(json: Self.edges)
        let signature = try await typed.sign(publicKey: child, with: signer(path))
        #expect(try typed.recoverAddress(signature: signature) == EthereumAddress(publicKey: child))
        #expect(try typed.recoverAddress(signature: EthereumSignature(rsv: signature.rsv)) == EthereumAddress(publicKey: child))
        await #expect(throws: ChainError.signatureMismatch) {
            _ = try await typed.sign(publicKey: child, with: signer("m/44/60/0/0/4"))
        }
    }

    /// A document around one message member of type `type` with value `value` (JSON text).
    static func single(_ type: String, _ value: String, extraTypes: String = "") -> String {
        #"{"types": {"EIP712Domain": [], "T": [{"name": "v", "type": "\#(type)"}]\#(extraTypes)}, "primaryType": "T", "domain": {}, "#
            + #""message": {"v": \#(value)}}"#
    }

    @Test func integerBounds() throws {
        let accepted: [(String, String)] = [
            ("uint8", "255"), ("uint8", "\"0xff\""), ("uint8", "\"0x00ff\""), ("uint8", "\"00255\""), ("int8", "-128"), ("int8", "127"),
            ("int8", "\"-128\""), ("uint256", "\"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\""),
            ("int256", "\"57896044618658097711785492504343953926634992332820282019728792003956564819967\""), ("int16", "-0"),
            ("uint64", "18446744073709551615"), ("int72", "-2361183241434822606848"), ("uint8", "\"0x000\""), ("uint8", "\"000\""),
            ("uint8", "\"" + String(repeating: "0", count: 200_000) + "255\""), ("uint8", "\"0x" + String(repeating: "0", count: 200_000) + "ff\""),
        ]
        for (type, value) in accepted {
            #expect(throws: Never.self, "\(type) \(value)") { try EthereumTypedData(json: Self.single(type, value)) }
        }
        let outOfRange: [(String, String)] = [
            ("uint8", "256"), ("uint8", "-1"), ("uint8", "\"0x100\""), ("int8", "128"), ("int8", "-129"), ("int16", "\"0x8000\""),
            ("uint256", "\"115792089237316195423570985008687907853269984665640564039457584007913129639936\""),
            ("int256", "\"57896044618658097711785492504343953926634992332820282019728792003956564819968\""),
            ("int256", "\"-57896044618658097711785492504343953926634992332820282019728792003956564819969\""),
            ("uint256", "\"0x1" + String(repeating: "0", count: 64) + "\""), ("int72", "-2361183241434822606849"),
        ]
        for (type, value) in outOfRange {
            #expect(throws: ChainError.invalidEncoding(reason: "message.v: out of range for \(type)"), "\(type) \(value)") {
                try EthereumTypedData(json: Self.single(type, value))
            }
        }
        for value in ["1.5", "1e3", "1.0", "\"\"", "\"-\"", "\"+1\"", "\" 1\"", "\"0x\"", "\"-0x1\"", "\"0X1\"", "\"1_000\"", "\"0xg\""] {
            #expect(throws: ChainError.invalidEncoding(reason: "message.v: malformed integer"), "\(value)") {
                try EthereumTypedData(json: Self.single("uint256", value))
            }
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: expected a value of type int8"), "bool for int") {
            try EthereumTypedData(json: Self.single("int8", "true"))
        }
    }

    @Test func bytesAndArrayShapes() throws {
        #expect(throws: Never.self) { try EthereumTypedData(json: Self.single("bytes32", "\"0x" + String(repeating: "Ab", count: 32) + "\"")) }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: not 4 bytes")) {
            try EthereumTypedData(json: Self.single("bytes4", "\"0x010203\""))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: not 4 bytes")) {
            try EthereumTypedData(json: Self.single("bytes4", "\"0x0102030405\""))
        }
        for bad in ["\"010203\"", "\"0x123\"", "\"0xzz\"", "\"0X12\""] {
            #expect(throws: ChainError.invalidEncoding(reason: "message.v: expected 0x and an even number of hex digits"), "\(bad)") {
                try EthereumTypedData(json: Self.single("bytes", bad))
            }
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: expected a value of type bytes")) {
            try EthereumTypedData(json: Self.single("bytes", "12"))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: not 2 items")) {
            try EthereumTypedData(json: Self.single("string[2]", #"["a"]"#))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v[1]: not 2 items")) {
            try EthereumTypedData(json: Self.single("uint8[2][]", "[[1, 2], [3]]"))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v[0]: expected a value of type uint8[2]")) {
            try EthereumTypedData(json: Self.single("uint8[2][]", "[1, 2]"))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: expected a value of type string")) {
            try EthereumTypedData(json: Self.single("string", "null"))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "message.v: expected a value of type bool")) {
            try EthereumTypedData(json: Self.single("bool", "\"true\""))
        }
        #expect(throws: ChainError.checksumMismatch) {
            try EthereumTypedData(json: Self.single("address", "\"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD\""))
        }
        #expect(throws: ChainError.invalidAddress(reason: "not 40 hex digits")) {
            try EthereumTypedData(json: Self.single("address", "\"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA\""))
        }
        // All lowercase and all uppercase hex digits are taken as they are.
        #expect(throws: Never.self) { try EthereumTypedData(json: Self.single("address", "\"0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED\"")) }
    }

    @Test func malformedTypesAreRefused() throws {
        let cases: [(String, String)] = [
            ("uint7", #"unsupported type "uint7""#), ("uint", #"unsupported type "uint""#), ("int264", #"unsupported type "int264""#),
            ("bytes0", #"unsupported type "bytes0""#), ("bytes33", #"unsupported type "bytes33""#), ("uint08", #"unsupported type "uint08""#),
            ("uint8[01]", #"malformed type "uint8[01]""#), ("uint8[0]", #"malformed type "uint8[0]""#),
            ("uint8 [2]", #"malformed type "uint8 [2]""#), ("uint8]", #"malformed type "uint8]""#), ("[]", #"malformed type "[]""#),
            ("uint8[", #"malformed type "uint8[""#), ("Persn", "type T: unknown type Persn"), ("Persn[]", "type T: unknown type Persn"),
            ("string" + String(repeating: "[]", count: 33),
             "type \"string" + String(repeating: "[]", count: 29) + "…\": too many array dimensions"),
        ]
        for (type, reason) in cases {
            #expect(throws: ChainError.invalidEncoding(reason: reason), "\(type)") { try EthereumTypedData(json: Self.single(type, "1")) }
        }
    }

    @Test func malformedDocumentsAreRefused() throws {
        let mailTypes = #"{"EIP712Domain": [], "Person": [{"name": "name", "type": "string"}], "Mail": [{"name": "from", "type": "Person"}]}"#
        let cases: [(String, String)] = [
            (#"{"types": {}, "types": {}, "primaryType": "T", "domain": {}, "message": {}}"#, #"JSON: duplicate key "types""#),
            (#"{"types": \#(mailTypes), "primaryType": "Mail", "domain": {}, "message": {"from": {"name": "a", "name": "b"}}}"#,
             #"JSON: duplicate key "name""#),
            (#"{"types": \#(mailTypes), "primaryType": "Mail", "domain": {}, "message": {}, "extra": 1}"#, #"typed data: unknown key "extra""#),
            (#"{"types": \#(mailTypes), "primaryType": "Mail", "domain": {}}"#, #"typed data: missing "message""#),
            (#"{"types": {"T": []}, "primaryType": "T", "domain": {"name": "x"}, "message": {}}"#,
             "the domain has members but types has no EIP712Domain"),
            (#"{"types": {"EIP712Domain": [{"name": "chainId", "type": "string"}], "T": []}, "primaryType": "T", "domain": {"chainId": "1"}, "message": {}}"#,
             "EIP712Domain.chainId must be of type uint256"),
            (#"{"types": \#(mailTypes), "primaryType": "Mail", "domain": {"name": "x"}, "message": {"from": {"name": "a"}}}"#,
             #"domain: unknown member "name" for type EIP712Domain"#),
            (#"{"types": \#(mailTypes), "primaryType": "Mail", "domain": {}, "message": {"from": {}}}"#, "message.from.name: missing"),
            (#"{"types": \#(mailTypes), "primaryType": "Mail", "domain": {}, "message": {"from": {"name": "a", "age": 1}}}"#,
             #"message.from: unknown member "age" for type Person"#),
            (#"{"types": \#(mailTypes), "primaryType": "Letter", "domain": {}, "message": {}}"#, #"unknown primaryType "Letter""#),
            (#"{"types": \#(mailTypes), "primaryType": "EIP712Domain", "domain": {}, "message": {}}"#,
             "primaryType EIP712Domain (a domain-only signature) is not supported"),
            (#"{"types": {"A": [{"name": "b", "type": "B"}], "B": [{"name": "a", "type": "A[]"}]}, "primaryType": "A", "domain": {}, "message": {}}"#,
             "type A is recursive"),
            (#"{"types": {"Node": [{"name": "kids", "type": "Node[2][]"}]}, "primaryType": "Node", "domain": {}, "message": {"kids": []}}"#,
             "type Node is recursive"),
            (#"{"types": {"address": []}, "primaryType": "address", "domain": {}, "message": {}}"#, #"type name "address" is an atomic type"#),
            (#"{"types": {"uint7": []}, "primaryType": "uint7", "domain": {}, "message": {}}"#, #"type name "uint7" is an atomic type"#),
            (#"{"types": {"T": [{"name": "a", "type": "uint8"}, {"name": "a", "type": "bool"}]}, "primaryType": "T", "domain": {}, "message": {}}"#,
             "type T: duplicate member a"),
            (#"{"types": {"T": [{"name": "a", "type": "uint8", "extra": 1}]}, "primaryType": "T", "domain": {}, "message": {}}"#,
             #"types."T": members must be {"name": string, "type": string}"#),
            (#"{"types": {"T": {}}, "primaryType": "T", "domain": {}, "message": {}}"#, #"types."T": not an array"#),
            (#"{"types": [], "primaryType": "T", "domain": {}, "message": {}}"#, "types: not an object"),
            (#"{"types": {"T": []}, "primaryType": 1, "domain": {}, "message": {}}"#, "primaryType: not a string"),
            (#"{"types": {"T": []}, "primaryType": "T", "domain": [], "message": {}}"#, "domain: not an object"),
            (#"{"types": {"T": []}, "primaryType": "T", "domain": {}, "message": []}"#, "message: expected a value of type T"),
            (#"[]"#, "typed data: not a JSON object"),
        ]
        for (json, reason) in cases {
            #expect(throws: ChainError.invalidEncoding(reason: reason), "\(json)") { try EthereumTypedData(json: json) }
        }
        // Names that are not ASCII identifiers have their own error (issue 32, finding 2).
        #expect(throws: ChainError.invalidTypedDataName(path: "types", name: "T-1")) {
            try EthereumTypedData(json: #"{"types": {"T-1": []}, "primaryType": "T-1", "domain": {}, "message": {}}"#)
        }
        #expect(throws: ChainError.invalidTypedDataName(path: "types.T", name: "a b")) {
            try EthereumTypedData(json: #"{"types": {"T": [{"name": "a b", "type": "uint8"}]}, "primaryType": "T", "domain": {}, "message": {}}"#)
        }
    }

    @Test func strictJSON() throws {
        let good = Self.single("string", "\"x\"")
        let cases: [(String, String)] = [
            (good + " x", "JSON: trailing characters"), (good + "{}", "JSON: trailing characters"),
            (String(good.dropLast()), "JSON: expected '}'"), ("", "JSON: truncated"),
            (Self.single("string", #""\ud800""#), "JSON: lone surrogate"), (Self.single("string", #""\udc00x""#), "JSON: lone surrogate"),
            (Self.single("string", #""\x41""#), "JSON: invalid escape"), (Self.single("string", "\"a\u{1}b\""), "JSON: control character in a string"),
            (Self.single("uint8", "01"), "JSON: expected '}'"), (Self.single("uint8", "-"), "JSON: malformed number"),
            (Self.single("uint8", "1."), "JSON: malformed number"), (Self.single("uint8", "TRUE"), "JSON: unexpected character"),
            ("\u{FEFF}" + good, "JSON: unexpected character"),
            (Self.single("string[]", String(repeating: "[", count: 70) + String(repeating: "]", count: 70)), "JSON: nested too deeply"),
        ]
        for (json, reason) in cases {
            #expect(throws: ChainError.invalidEncoding(reason: reason), "\(json.prefix(80))") { try EthereumTypedData(json: json) }
        }
        #expect(throws: ChainError.invalidEncoding(reason: "JSON: string is not UTF-8")) {
            try EthereumTypedData(json: Data(Self.single("string", "\"\u{E9}\"").utf8.map { $0 == 0xC3 ? 0xFF : $0 }))
        }
        // Escapes and whitespace that JSON allows are read as JSON reads them.
        let typed = try EthereumTypedData(json: " \r\n\t" + Self.single("string", #""\u00e9\/\b\f\t\r\n\"\\""#) + "\n")
        #expect(typed.message["v"] == .string("é/\u{8}\u{C}\t\r\n\"\\"))
        // Strings are hashed as their UTF-8: é precomposed and decomposed are different messages.
        let composed = try EthereumTypedData(json: Self.single("string", #""\u00e9""#))
        let decomposed = try EthereumTypedData(json: Self.single("string", #""e\u0301""#))
        #expect(composed != decomposed)
        #expect(composed.signingHash != decomposed.signingHash)
    }
}
