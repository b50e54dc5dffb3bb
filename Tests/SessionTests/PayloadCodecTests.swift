import MPCCrypto
import MPCProtocols
import Testing
@testable import CloudNode
@testable import SilentShardCore

@Suite("Session payloads: TLV, SETUP, ACCEPT, REJECT, control, status, link")
struct PayloadCodecTests {
    let fields: [UInt8: TLVFieldSize] = [0x01: .exactly(1), 0x02: .range(0...4), 0x80: .exactly(2)]

    func tlvCode(_ bytes: [UInt8]) -> WireCode? {
        do { _ = try TLVPayload.decode(bytes, fields: fields); return nil } catch { return error.code }
    }

    @Test func tlvStrictness() throws {
        let payload = TLVPayload([TLVRecord(tag: 0x02, value: [9, 9]), TLVRecord(tag: 0x01, value: [7])])
        let bytes = payload.encoded()
        #expect(bytes == [0x01, 0, 1, 7, 0x02, 0, 2, 9, 9])
        #expect(try TLVPayload.decode(bytes, fields: fields) == payload)
        #expect(try TLVPayload.decode([], fields: fields).records.isEmpty)
        #expect(tlvCode([0x02, 0, 1, 9, 0x01, 0, 1, 7]) == .malformed)        // descending
        #expect(tlvCode([0x01, 0, 1, 7, 0x01, 0, 1, 7]) == .malformed)        // duplicate
        #expect(tlvCode([0x01, 0, 2, 7, 7]) == .malformed)                    // fixed size wrong
        #expect(tlvCode([0x02, 0, 5, 1, 2, 3, 4, 5]) == .malformed)           // range exceeded
        #expect(tlvCode([0x01, 0, 1]) == .malformed)                          // truncated value
        #expect(tlvCode([0x01, 0]) == .malformed)                             // truncated length
        #expect(tlvCode([0x03, 0, 1, 1]) == .unknownField)                    // unknown 0x01–0x7F
        #expect(tlvCode([0x03, 0, 1, 1, 0x04, 0]) == .malformed)              // …but truncation wins
        #expect(tlvCode([0x01, 0, 1, 7, 0x80, 0, 1, 1]) == .malformed)        // known extension with wrong size
        let ext = try TLVPayload.decode([0x01, 0, 1, 7, 0x90, 0, 3, 1, 2, 3], fields: fields)
        #expect(ext[0x90] == [1, 2, 3])                                        // unknown extension kept
    }

    @Test func setupRoundTripEveryOperation() throws {
        for mode in SessionMode.allCases {
            let cluster = Cluster(mode: mode)
            for algorithm in SessionAlgorithm.allCases {
                for operation in SessionOperation.allCases where operation.isOffered(mode: mode, algorithm: algorithm) {
                    var payload = try cluster.setupPayload(operation, algorithm: algorithm, appKeys: SessionKeyPair())
                    payload.clientInfo = Array("sdk/0.1".utf8)
                    payload.extensions = [TLVRecord(tag: 0xC0, value: [1, 2])]
                    let decoded = try SetupPayload(bytes: payload.encoded())
                    #expect(decoded == payload)
                    #expect(decoded.encoded() == payload.encoded())
                }
            }
        }
    }

    @Test func setupDecodingRejections() throws {
        let cluster = Cluster(mode: .duo)
        let payload = try cluster.setupPayload(.keygen, appKeys: SessionKeyPair())
        let records = payload.tlv.records
        func code(_ records: [TLVRecord]) -> WireCode? {
            do { _ = try SetupPayload(bytes: TLVPayload(records).encoded()); return nil } catch { return error.code }
        }
        for required: UInt8 in [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x0A, 0x0B] {
            #expect(code(records.filter { $0.tag != required }) == .malformed)
        }
        #expect(code(records + [TLVRecord(tag: 0x16, value: [])]) == .unknownField)
        #expect(code(records.map { $0.tag == 0x05 ? TLVRecord(tag: 0x05, value: [1, 2, 3]) : $0 }) == .malformed)
        #expect(code(records.map { $0.tag == 0x06 ? TLVRecord(tag: 0x06, value: Array($0.value.prefix(20))) : $0 }) == .malformed)
        #expect(code(records + [TLVRecord(tag: 0x80, value: [UInt8](repeating: 0x41, count: 65))]) == .malformed)
    }

    @Test func acceptRoundTrip() throws {
        let cluster = Cluster(mode: .trio)
        let status = KeyStatus(currentGen: Generation(checked: [UInt8](repeating: 1, count: 32)),
                               prepared: (Generation(checked: [UInt8](repeating: 2, count: 32)), [UInt8](repeating: 3, count: 32)),
                               preparedHoldsCommit: true, decision: .committed)
        var accept = AcceptPayload(setupHash: SetupHash.random(), nodeKey: cluster.nodeA.verifyingKey,
                                   certificate: cluster.certificate(1), sessionKeys: SessionKeyPair().publicKeys,
                                   nodeTime: 123, keyStatus: status, limits: (65_536, 1 << 20))
        accept.extensions = [TLVRecord(tag: 0x81, value: [5])]
        let decoded = try AcceptPayload(bytes: accept.encoded())
        #expect(decoded == accept)
        #expect(decoded.keyStatus == status)
        #expect(decoded.limits?.maxMessage == 1 << 20)
        let minimal = AcceptPayload(setupHash: SetupHash.random(), nodeKey: cluster.cloudKey.verifyingKey,
                                    certificate: nil, sessionKeys: SessionKeyPair().publicKeys, nodeTime: nil, keyStatus: nil)
        #expect(try AcceptPayload(bytes: minimal.encoded()) == minimal)
        #expect(throws: SessionError.self) { try AcceptPayload(bytes: Array(minimal.encoded().dropFirst(35))) }
    }

    @Test func rejectFrozenLayout() throws {
        let key = Ed25519.SigningKey()
        let hash = SetupHash.random()
        let reject = RejectPayload(code: .staleTimestamp, retryAfterSeconds: 7, setupHash: hash, nodeKey: key.verifyingKey,
                                   detail: UInt64(1_800_000_000_000).bigEndianBytes)
        let bytes = reject.encoded()
        #expect(Array(bytes.prefix(6)) == [0x02, 0x06, 0, 0, 0, 7])
        #expect(Array(bytes[6..<38]) == hash.bytes)
        #expect(Array(bytes[38..<70]) == key.verifyingKey.bytes)
        #expect(bytes[70] == 0 && Array(bytes[71..<73]) == [0, 8] && bytes.count == 81)
        let decoded = try RejectPayload(bytes: bytes)
        #expect(decoded == reject && decoded.nodeTimeDetail == 1_800_000_000_000)
        let cluster = Cluster(mode: .trio)
        let withCert = RejectPayload(code: WireCode(rawValue: 0x06FF), setupHash: nil, nodeKey: cluster.nodeB.verifyingKey,
                                     certificate: cluster.certificate(2))
        let decodedCert = try RejectPayload(bytes: withCert.encoded())
        #expect(decodedCert == withCert && decodedCert.code.retry == .delay && !decodedCert.code.isKnown)
        var bad = bytes; bad[70] = 2
        #expect(throws: SessionError.self) { try RejectPayload(bytes: bad) }
        #expect(throws: SessionError.self) { try RejectPayload(bytes: bytes + [0]) }
        var long = Array(bytes.prefix(71)); long += [0x02, 0x01] + [UInt8](repeating: 0, count: 513)
        #expect(throws: SessionError.self) { try RejectPayload(bytes: long) }
    }

    @Test func controlPayloadRoundTrips() throws {
        let k = KeyID(checked: [UInt8](repeating: 1, count: 32)), g = Generation(checked: [UInt8](repeating: 2, count: 32)), d = [UInt8](repeating: 3, count: 32)
        let ready = ReadyPayload(keyID: k, gen: g, digest: d)
        #expect(try ReadyPayload(bytes: ready.encoded) == ready && ready.encoded.count == 96)
        let commit = CommitPayload(keyID: k, gen: g, digest: d, context: .reconcile)
        #expect(try CommitPayload(bytes: commit.encoded) == commit && commit.encoded.count == 97)
        #expect(throws: SessionError.self) { try CommitPayload(bytes: k.bytes + g.bytes + d + [3]) }
        for current in [nil, Optional(g)] {
            let outcome = OutcomePayload(keyID: k, gen: g, digest: d, outcome: .inDoubt, currentGen: current)
            #expect(try OutcomePayload(bytes: outcome.encoded) == outcome && outcome.encoded.count == 129)
        }
        #expect(throws: SessionError.self) { try OutcomePayload(bytes: k.bytes + g.bytes + d + [0] + g.bytes) }
        let aborts = [AbortPayload(code: .abortAndBan, blamed: 1, ban: true, detail: "bad proof"),
                      AbortPayload(code: .rollback, blamed: nil, rollback: (k, g)),
                      AbortPayload(code: .timeout, blamed: nil, detail: String(repeating: "é", count: 200))]
        for abort in aborts { #expect(try AbortPayload(bytes: abort.encoded) == abort) }
        #expect(aborts[2].detail.utf8.count <= 256)
        #expect(throws: SessionError.self) { try AbortPayload(bytes: [5, 1, 0xFF, 1, 0, 0]) }   // ban without blame
        #expect(throws: SessionError.self) { try AbortPayload(bytes: [5, 1, 1, 4, 0, 0]) }      // unknown flag
        #expect(throws: SessionError.self) { try AbortPayload(bytes: [5, 1, 1, 0, 0, 1, 0xFF]) } // not UTF-8
        #expect(AbortPayload(error: .detected(.abortAndBan, blamed: 2)).ban)
        #expect(AbortPayload(error: .cloudVerificationFailed(.nodeSignature)).code == .badAuthenticator)
        for done in [DonePayload.none, .ecdsa([UInt8](repeating: 4, count: 64) + [1]), .eddsa([UInt8](repeating: 5, count: 64))] {
            #expect(try DonePayload(bytes: done.encoded) == done)
        }
        #expect(throws: SessionError.self) { try DonePayload(bytes: [1] + [UInt8](repeating: 4, count: 64) + [4]) }
        #expect(throws: SessionError.self) { try DonePayload(bytes: [0, 0]) }
        #expect(throws: SessionError.self) { try DonePayload(bytes: [3]) }
        let stored = StoredPayload(presigID: InstanceID(checked: d), keyID: k, gen: g, expiresAt: 99)
        #expect(try StoredPayload(bytes: stored.encoded) == stored && stored.encoded.count == 104)
        let export = ExportResponsePayload(setupHash: SetupHash(checked: d), keyID: k, gen: g, party: 1, exportMessage: [UInt8](repeating: 6, count: 80))
        #expect(try ExportResponsePayload(bytes: export.encoded) == export && export.encoded.count == 177)
        #expect(throws: SessionError.self) { try ExportResponsePayload(bytes: Array(export.encoded.dropLast())) }
    }

    @Test func statusBlocks() throws {
        let g = Generation(checked: [UInt8](repeating: 2, count: 32)), d = [UInt8](repeating: 3, count: 32)
        for state in [AppState(currentGen: nil, staged: nil), AppState(currentGen: g, staged: nil),
                      AppState(currentGen: nil, staged: (g, d)), AppState(currentGen: g, staged: (g, d))] {
            #expect(try AppState(bytes: state.encoded) == state)
        }
        #expect(throws: SessionError.self) { try AppState(bytes: [4]) }
        #expect(throws: SessionError.self) { try AppState(bytes: [1] + Array(g.bytes.prefix(31))) }
        let status = KeyStatus(currentGen: nil, prepared: (g, d), preparedHoldsCommit: false, decision: .aborted)
        #expect(try KeyStatus(bytes: status.encoded) == status)
        #expect(throws: SessionError.self) { try KeyStatus(bytes: [4, 0]) }       // bit 2 without bit 1
        #expect(throws: SessionError.self) { try KeyStatus(bytes: [0, 3]) }       // unknown decision
        #expect(throws: SessionError.self) { try KeyStatus(bytes: [0, 0, 0]) }
    }

    @Test func linkPayloads() throws {
        let cluster = Cluster(mode: .trio)
        guard let cert = cluster.certificate(1) else { Issue.record("no certificate"); return }
        let open = LinkOpenPayload(certificate: cert, purpose: .preSignFinal, mode: .trio, algorithm: .eddsa,
                                   operation: .preSignFinal, token: Array("tok".utf8), timestamp: 5,
                                   clientAddress: Array("10.0.0.1".utf8))
        #expect(try LinkOpenPayload(bytes: open.encoded()) == open)
        var noAddress = open; noAddress.clientAddress = [0x0A]
        #expect(throws: SessionError.self) { try LinkOpenPayload(bytes: noAddress.encoded()) }
        let request = PeerStatusPayload.request(keyID: KeyID(checked: [UInt8](repeating: 1, count: 32)), gen: Generation(checked: [UInt8](repeating: 2, count: 32)))
        let response = PeerStatusPayload.response(keyID: KeyID(checked: [UInt8](repeating: 1, count: 32)), gen: Generation(checked: [UInt8](repeating: 2, count: 32)),
                                                  state: .prepared, digest: [UInt8](repeating: 3, count: 32), commitFrame: [9, 9])
        #expect(try PeerStatusPayload(bytes: request.encoded) == request)
        #expect(try PeerStatusPayload(bytes: response.encoded) == response)
        #expect(throws: SessionError.self) { try PeerStatusPayload(bytes: request.encoded + [0]) }
        #expect(throws: SessionError.self) { try PeerStatusPayload(bytes: Array(response.encoded.dropLast())) }
    }

    @Test func partySetsAndPaths() throws {
        #expect(try PartySet(bytes: [2, 0, 2]) == PartySet([2, 0]))
        for bad: [UInt8] in [[], [0], [2, 1, 0], [2, 1, 1], [2, 0], [1, 0, 1]] {
            #expect(throws: SessionError.self) { try PartySet(bytes: bad) }
        }
        let path = DerivationPathBytes(indices: [44 | 0x8000_0000, 0])
        #expect(try DerivationPathBytes(bytes: path.encoded) == path && !path.isSoft)
        #expect(throws: SessionError.self) { try DerivationPathBytes(bytes: [1, 0, 0, 0]) }
        #expect(throws: SessionError.self) { try DerivationPathBytes(bytes: [0, 0]) }
    }
}
