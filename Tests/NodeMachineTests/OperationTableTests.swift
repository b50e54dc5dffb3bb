@testable import CloudNode
import SilentShardCore
import Testing

/// Issue 34 item 2: the node's routes, the step handler's action → operation mapping, the token scopes, the
/// operations each mode serves and the app's event names derive from the one operation table. These literals are
/// the lists as they were written by hand before the table existed (pinned against that code first), so the table
/// must reproduce today's behaviour exactly.
@Suite struct OperationTableTests {
    @Test func derivedRouteTableEqualsTodaysLists() {
        let table = NodeRouteTable.standard
        #expect(table.duoActions == ["keygen", "reconcile", "refresh", "sign", "presign", "import"])
        #expect(table.duoPostActions == ["export", "presign-final"])
        #expect(table.trioPaths == ["trio"])
        #expect(table.trioECDSAActions == ["keygen", "reconcile", "refresh", "sign", "presign", "presign-final",
                                           "hard-derivation", "recover", "export", "import"])
        #expect(table.trioEdDSAActions == ["keygen", "reconcile", "refresh", "sign", "presign", "presign-final",
                                           "recover", "export", "import"])
        #expect(table.trioPostActions == ["presign-final"])
    }

    @Test func stepHandlerActionsMapAsToday() {
        let expected: [String: SessionOperation] = [
            "keygen": .keygen, "reconcile": .reconcile, "refresh": .refresh, "sign": .sign, "presign": .preSign,
            "recover": .recover, "export": .export, "import": .import, "hard-derivation": .hardDerivation,
        ]
        for (action, operation) in expected { #expect(NodeStepHandler.operation(action) == operation) }
        // preSignFinal is a POST: its action is no WebSocket step; nor are the Swift case names.
        for action in ["presign-final", "preSign", "hardDerivation", "preSignFinal", "", "peer"] {
            #expect(NodeStepHandler.operation(action) == nil)
        }
    }

    @Test func scopeAndEventNamesAsToday() {
        let names: [SessionOperation: String] = [
            .keygen: "keygen", .reconcile: "reconcile", .refresh: "refresh", .sign: "sign", .preSign: "preSign",
            .preSignFinal: "preSignFinal", .recover: "recover", .export: "export", .import: "import",
            .hardDerivation: "hardDerivation",
        ]
        #expect(Set(names.keys) == Set(SessionOperation.allCases))
        for (operation, name) in names {
            #expect(KeyAuthorization.scopeName(operation) == name)
            #expect(operation.eventName == name)
        }
    }

    @Test func servedOperationsAsToday() {
        #expect(NodeParty.duoOperations == [.keygen, .refresh, .sign, .reconcile, .import, .preSign])
        #expect(NodeParty.trioOperations == [.keygen, .refresh, .sign, .preSign, .export, .recover, .reconcile, .import,
                                             .hardDerivation])
    }

    @Test func offeredAndShareChangingAsToday() {
        for operation in SessionOperation.allCases {
            #expect(operation.changesShares == [.keygen, .refresh, .recover, .import, .hardDerivation].contains(operation))
            for mode in [SessionMode.duo, .trio] {
                for algorithm in SessionAlgorithm.allCases {
                    let offered = switch operation {
                    case .recover: mode == .trio
                    case .hardDerivation: mode == .trio && algorithm == .ecdsa
                    default: true
                    }
                    #expect(operation.isOffered(mode: mode, algorithm: algorithm) == offered)
                }
            }
        }
    }

    /// Issue 34 item 4: the node's run factories left the table's rows for `CloudNode` (keyed by operation); an
    /// operation that runs a protocol (receivable tags in its row) has a factory, one that runs none has not.
    @Test func issue34_item4_nodeFactoryForExactlyTheOperationsWithARun() {
        let withRun = SessionOperation.allCases.filter { operation in
            operation.row.receivableTags.values.contains { !$0.isEmpty }
        }
        #expect(Set(NodeProtocolRun.factories.keys) == Set(withRun))
        #expect(Set(withRun) == Set(SessionOperation.allCases).subtracting([.reconcile, .preSignFinal]))
    }
}
