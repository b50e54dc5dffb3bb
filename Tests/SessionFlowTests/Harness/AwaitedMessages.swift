import MPCProtocols
import SilentShardCore

extension SessionRun {
    /// For tests that pump machines in process: removes from `inbox` and returns one message for each
    /// (tag, sender) this machine awaits, once all of them are there; nil (inbox untouched) otherwise.
    func takeAwaited(from inbox: inout [ProtocolMessage]) -> [ProtocolMessage]? {
        let needed = awaiting.flatMap { tag in awaitingSenders.map { (tag, $0) } }
        guard !needed.isEmpty else { return nil }
        var rest = inbox
        var taken: [ProtocolMessage] = []
        for (tag, from) in needed {
            guard let index = rest.firstIndex(where: { $0.tag == tag && $0.from == from }) else { return nil }
            taken.append(rest.remove(at: index))
        }
        inbox = rest
        return taken
    }
}
