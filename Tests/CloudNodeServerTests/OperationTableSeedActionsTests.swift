import duo
import SilentShardCore
import Testing
import trio

/// The operation table's route actions (issue 34 item 2) are the seeds' default actions: the stock providers of
/// `Sources/duo` and `Sources/trio` (public API, fixed by the seeds) reach exactly the routes the node derives.
@Suite struct OperationTableSeedActionsTests {
    @Test func trioProvidersUseTheTablesActions() {
        for provider in [TrioECDSANetworkActions() as any TrioNetworkActionProvider, TrioEdDSANetworkActions()] {
            let actions: [(SessionOperation, NetworkAction)] = [
                (.keygen, provider.keygen), (.reconcile, provider.reconcile), (.refresh, provider.refresh),
                (.sign, provider.sign), (.preSign, provider.preSign), (.preSignFinal, provider.preSignFinal),
                (.recover, provider.recover), (.export, provider.export), (.import, provider.import),
                (.hardDerivation, provider.hardDerivation),
            ]
            for (operation, action) in actions { #expect(action.action == operation.row.action, "\(operation)") }
        }
    }

    @Test func duoProvidersUseTheTablesActions() {
        for provider in [DuoECDSANetworkActions() as any DuoNetworkActionProvider, DuoEdDSANetworkActions()] {
            let actions: [(SessionOperation, NetworkAction)] = [
                (.keygen, provider.keygen), (.reconcile, provider.reconcile), (.refresh, provider.refresh),
                (.sign, provider.sign), (.preSign, provider.preSign), (.preSignFinal, provider.preSignFinal),
                (.import, provider.import),
            ]
            for (operation, action) in actions { #expect(action.action == operation.row.action, "\(operation)") }
            // Duo serves these as WebSocket steps; export and preSignFinal are POSTs.
            #expect(OperationTable.webSocketOperations(in: .duo) == [.keygen, .reconcile, .refresh, .sign, .preSign, .import])
        }
    }
}
