// Issue 34 item 2 (audit MEDIUM-1): the operation table's security rules pinned against the rules the hand-written
// code had before the table (commit 49831a2), written out here as an independent specification: SETUP field presence
// per operation × mode, participant and path rules, receivable tags per operation × algorithm, the rate-limit kind,
// lease and ban stages, the new key id, which operations have a node run and where `NodeProtocolRun.make` runs,
// every action string's WebSocket and POST operation, and the POST pipelines. A row edit that changes any of them
// (export taking a path, sign taking holders, export without the ban stage, …) fails here.
@testable import CloudNode
@testable import SilentShardCore
import MPCProtocols
import Testing

@Suite("Issue 34 item 2: the operation table keeps the pre-table rules")
struct OperationTablePinTests {
    typealias T = SetupPayload.Tag
    static func oldPresence(_ operation: SessionOperation, mode: SessionMode) -> [UInt8: SetupFieldRules.Presence] {
        var table: [UInt8: SetupFieldRules.Presence]
        switch operation {
        case .keygen, .preSignFinal: table = [:]
        case .reconcile: table = [T.keyID: .required, T.appState: .required, T.groupID: .required]
        case .refresh: table = [T.keyID: .required, T.gen: .required, T.holders: .optional, T.groupID: .required]
        case .sign: table = [T.keyID: .required, T.gen: .required, T.path: .required, T.message: .required, T.groupID: .required]
        case .preSign: table = [T.keyID: .required, T.gen: .required, T.path: .required, T.presignTTL: .optional, T.groupID: .required]
        case .recover: table = [T.keyID: .required, T.publicKey: .required, T.holders: .required, T.groupID: .optional]
        case .export: table = [T.keyID: .required, T.gen: .required, T.exportKey: .required, T.groupID: .required]
        case .import: table = [T.keyID: .required, T.publicKey: .required, T.chainCode: .required]
        case .hardDerivation: table = [T.keyID: .required, T.gen: .required, T.path: .required, T.groupID: .required]
        }
        if mode == .duo { table[T.groupID] = nil }
        return table
    }
    static func oldTags(_ operation: SessionOperation, _ algorithm: SessionAlgorithm) -> Set<UInt16> {
        switch (operation, algorithm) {
        case (.keygen, .ecdsa), (.refresh, .ecdsa), (.import, .ecdsa), (.recover, .ecdsa): return DKLsDKGRun.receivableTags
        case (.keygen, .eddsa), (.refresh, .eddsa), (.import, .eddsa): return FROSTDKGRun.receivableTags
        case (.recover, .eddsa): return FROSTRecoverRun.receivableTags
        case (.sign, .ecdsa): return DKLsSignRun.receivableTags
        case (.sign, .eddsa): return FROSTSignRun.receivableTags
        case (.preSign, .ecdsa): return DKLsPresignRun.receivableTags
        case (.preSign, .eddsa): return FROSTPresignRun.receivableTags
        case (.export, .ecdsa): return DKLsExportRun.receivableTags
        case (.export, .eddsa): return FROSTExportRun.receivableTags
        case (.hardDerivation, .ecdsa): return DKLsHardDerivationRun.receivableTags
        default: return []
        }
    }
    static func oldWS(_ action: String) -> SessionOperation? {
        ["keygen": .keygen, "reconcile": .reconcile, "refresh": .refresh, "sign": .sign, "presign": .preSign,
         "recover": .recover, "export": .export, "import": .import, "hard-derivation": .hardDerivation][action]
    }
    static func oldPost(_ action: String, _ mode: SessionMode) -> SessionOperation? {
        switch action {
        case "export": return mode == .duo ? .export : nil
        case "presign-final": return .preSignFinal
        default: return nil
        }
    }
    static func oldMakeSupported(_ op: SessionOperation, _ mode: SessionMode, _ alg: SessionAlgorithm) -> Bool {
        let duoOps: Set<SessionOperation> = [.keygen, .refresh, .import, .sign, .preSign]
        guard mode == .trio || duoOps.contains(op) else { return false }
        switch (op, alg) {
        case (.keygen, _), (.refresh, _), (.import, _), (.hardDerivation, .ecdsa), (.preSign, _), (.recover, _), (.export, _), (.sign, _): return true
        default: return false
        }
    }
    @Test("every rule of every operation, mode and algorithm equals the pre-table rule")
    func issue34_item2_tableEqualsThePreTableRules() {
        for op in SessionOperation.allCases {
            let row = op.row
            for mode in SessionMode.allCases {
                #expect(SetupFieldRules.presence(op, mode: mode) == Self.oldPresence(op, mode: mode), "\(op) \(mode)")
                for alg in SessionAlgorithm.allCases {
                    let newMake = row.transports[mode] == .webSocket && row.algorithms.contains(alg) && NodeProtocolRun.factories[op] != nil
                    #expect(newMake == Self.oldMakeSupported(op, mode, alg), "make \(op) \(mode) \(alg)")
                }
            }
            for alg in SessionAlgorithm.allCases {
                #expect(SessionRuns.receivableTags(operation: op, algorithm: alg) == Self.oldTags(op, alg), "tags \(op) \(alg)")
            }
            #expect(row.participants == ((op == .sign || op == .preSign) ? .appAndOneSigner : .everyone), "participants \(op)")
            #expect(row.path == ((op == .sign || op == .preSign) ? .soft : op == .hardDerivation ? .notEmpty : .any), "path \(op)")
            let oldRate: AdmissionProfile.RateLimit? = [.keygen, .import, .hardDerivation].contains(op) ? .keyCreation
                : [.sign, .preSign].contains(op) ? .signingSession : nil
            #expect(row.admission.rateLimit == oldRate, "rate \(op)")
            let oldChanges = [.keygen, .refresh, .recover, .import, .hardDerivation].contains(op)
            #expect(row.admission.lease == (op == .reconcile || oldChanges), "lease \(op)")
            #expect(row.admission.ban == (op != .reconcile), "ban \(op)")
            #expect(row.newKeyID == (op == .hardDerivation))
            #expect((NodeProtocolRun.factories[op] != nil) == (op != .reconcile && op != .preSignFinal), "nodeRun \(op)")
        }
        for a in ["keygen", "reconcile", "refresh", "sign", "presign", "presign-final", "recover", "export", "import",
                  "hard-derivation", "preSign", "hardDerivation", "x", ""] {
            #expect(OperationTable.webSocketOperation(action: a) == Self.oldWS(a), "ws \(a)")
            for mode in SessionMode.allCases { #expect(OperationTable.postOperation(action: a, in: mode) == Self.oldPost(a, mode), "post \(a)") }
        }
        #expect(SessionOperation.allCases.filter { $0.row.admission.post == .presignature } == [.preSignFinal])
        #expect(SessionOperation.allCases.filter { $0.row.admission.post == .export } == [.export])
    }
}
