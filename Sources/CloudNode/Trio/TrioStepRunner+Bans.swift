import Foundation
import SilentShardCore

/// §9.4 at a trio node (A or B): `NodeBans`, shared with duo, with this node's party index in the record.
extension TrioStepRunner {
    var nodeBans: NodeBans { NodeBans(ledger: bans, store: store, queue: storeQueue, party: "node \(identity.index)") }
}
