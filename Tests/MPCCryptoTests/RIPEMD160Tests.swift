import MPCCrypto
import Testing

@Suite("RIPEMD-160 and Base58Check")
struct RIPEMD160Tests {
    /// The reference vectors of the RIPEMD-160 paper, and block-boundary lengths checked with OpenSSL 3.
    @Test func knownAnswers() {
        let vectors: [(String, String)] = [
            ("", "9c1185a5c5e9fc54612808977ee8f548b2258d31"),
            ("a", "0bdc9d2d256b3ee9daae347be6f4dc835a467ffe"),
            ("abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
            ("message digest", "5d0689ef49d2fae572b881b123a85ffa21595f36"),
            ("abcdefghijklmnopqrstuvwxyz", "f71c27109c692c1b56bbdceb5b9d2865b3708dbc"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "12a053384a9c0c88e405a06c27dcf49ada62eb2b"),
            (String(repeating: "x", count: 55), "c35538a4ab9792cab98479aa3ae2cc435c699b64"),
            (String(repeating: "x", count: 56), "af13b5ead9b74a9a6b97c4a612ddfd0baf61ff11"),
            (String(repeating: "x", count: 63), "9a195cb1828886c55c6dfe9e042399833dfbcd00"),
            (String(repeating: "x", count: 64), "bab3f04cc25d952a882718636600f5b22307ac41"),
            (String(repeating: "x", count: 65), "8421cbafb84e777fbd88c89863cee557103515d5"),
            (String(repeating: "x", count: 119), "96e1ae9b6b79fa79e7eb3097e35b64399176d7e0"),
            (String(repeating: "x", count: 120), "78dbb5007c86a1da8bdeb77419000efbdf277e9c"),
        ]
        for (message, digest) in vectors {
            #expect(RIPEMD160.hash(Array(message.utf8)) == hex(digest), "\(message.count) bytes")
        }
        #expect(RIPEMD160.hash([UInt8](repeating: 0x61, count: 1_000_000)) == hex("52783243c1697bdbe16d37f97f68f08325dc1528"))
    }

    @Test func base58CheckRoundTrip() {
        // Bitcoin address of HASH160 = 0 with version 0: "1111111111111111111114oLvT2".
        #expect(Base58Check.encode([UInt8](repeating: 0, count: 21)) == "1111111111111111111114oLvT2")
        #expect(Base58Check.decode("1111111111111111111114oLvT2") == [UInt8](repeating: 0, count: 21))
        for payload in [[], [0], [0, 0, 1], [0xFF, 0x00, 0x7F], Array(0..<78)] as [[UInt8]] {
            #expect(Base58Check.decode(Base58Check.encode(payload)) == payload)
        }
        #expect(Base58Check.decode("1111111111111111111114oLvT3") == nil)   // checksum
        #expect(Base58Check.decode("0OIl") == nil)                          // outside the alphabet
        #expect(Base58Check.decode("") == nil)
    }
}
