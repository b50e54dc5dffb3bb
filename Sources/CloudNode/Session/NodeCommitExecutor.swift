import Foundation
import MPCProtocols
import SilentShardCore

/// Performs ``NodeCommit``'s actions at a node (duo, trio A, trio B): the store calls are the caller's
/// (on its store queue), the frames go over the step's channel. Every decision is the machine's.
package enum NodeCommitExecutor {
    /// The node's store operations on this result.
    package struct Store {
        /// Stage PREPARED (trio).
        package var prepare: () async throws(NodeStoreError) -> Void
        /// The commit transaction.
        package var commit: () async throws(NodeStoreError) -> Void
        /// Drop the PREPARED share (tombstone; trio).
        package var drop: () async throws(NodeStoreError) -> Void
        /// Release the key's lease (duo, after the commit).
        package var releaseLease: () async -> Void

        package init(prepare: @escaping () async throws(NodeStoreError) -> Void = {},
                     commit: @escaping () async throws(NodeStoreError) -> Void,
                     drop: @escaping () async throws(NodeStoreError) -> Void = {},
                     releaseLease: @escaping () async -> Void = {}) {
            self.prepare = prepare
            self.commit = commit
            self.drop = drop
            self.releaseLease = releaseLease
        }
    }

    /// Runs `commit` to its end. Trio: `other` is the other node, whose READY is awaited; `relay` passes
    /// on what node A relays meanwhile.
    package static func run(_ commit: NodeCommit, other: PartyIndex?, channel: inout PartyFrameChannel, store: Store,
                            send: SessionDriver.Send, read: SessionDriver.Read,
                            relay: SessionDriver.Relay = { _ throws(SilentShardError) in }) async -> NodeCommit.Ending {
        var machine = commit
        var action = machine.start()
        while true {
            switch action {
            case .prepare:
                do throws(NodeStoreError) {
                    try await store.prepare()
                    await TestPause.reach(.prepared)
                    action = machine.handle(.prepared)
                } catch {
                    action = machine.handle(.storeFailed(currentChanged: false))
                }
            case .sendReady:
                do throws(SilentShardError) {
                    guard let other else { throw .invalidInput(reason: "no other node") }
                    try await send([try channel.control(.ready, payload: machine.readyPayload.encoded, to: other)])
                    action = machine.handle(.readySent)
                } catch {
                    action = machine.handle(.linkFailed(error))
                }
            case .awaitFrames:
                action = machine.handle(await nextFrame(other: other, channel: &channel, read: read, relay: relay))
            case .commitStore:
                if other == nil { await TestPause.reach(.commitReceived) }
                do throws(NodeStoreError) {
                    try await store.commit()
                    await TestPause.reach(.committed)
                    action = machine.handle(.storeCommitted)
                } catch {
                    if case .currentChanged = error { action = machine.handle(.storeFailed(currentChanged: true)) }
                    else { action = machine.handle(.storeFailed(currentChanged: false)) }
                }
            case .drop:
                do throws(NodeStoreError) {
                    try await store.drop()
                    action = machine.handle(.dropped)
                } catch {
                    action = machine.handle(.storeFailed(currentChanged: false))
                }
            case .releaseLease:
                await store.releaseLease()
                action = machine.handle(.done)
            case .sendAbort(let code):
                if let frame = try? channel.control(.abort, payload: AbortPayload(code: code, blamed: nil).encoded) {
                    try? await send([frame])
                }
                action = machine.handle(.done)
            case .sendOutcome(let outcome):
                if let frame = try? channel.control(.outcome, payload: machine.outcomePayload(outcome).encoded) {
                    try? await send([frame])
                }
                action = machine.handle(.done)
            case .end(let ending):
                return ending
            }
        }
    }

    /// Reads until the app's COMMIT or the other node's READY is buffered, or a read fails. A failed
    /// read ends the wait whatever came before it in the same message (a bad frame on a link is never
    /// passed over); it says whether the other node's READY had arrived, which decides whether that
    /// node's ABORT still promises anything (session.md §7.2 rule 4).
    private static func nextFrame(other: PartyIndex?, channel: inout PartyFrameChannel, read: SessionDriver.Read,
                                  relay: SessionDriver.Relay) async -> NodeCommit.Event {
        while true {
            if let frame = channel.take(kind: .commit, from: 0) { return .commit(try? CommitPayload(bytes: frame.payload)) }
            if let other, let frame = channel.take(kind: .ready, from: other) {
                return .ready(try? ReadyPayload(bytes: frame.payload))
            }
            let known = Set(channel.aborts.keys)
            do throws(SilentShardError) {
                try await SessionDriver.receive(channel: &channel, read: read, relay: relay)
            } catch {
                let readyArrived = other.map { channel.take(kind: .ready, from: $0) != nil } ?? false
                if let (sender, _) = channel.aborts.sorted(by: { $0.key < $1.key }).first(where: { !known.contains($0.key) }) {
                    return .abort(from: sender, error: error, readyArrived: readyArrived)
                }
                return .linkFailed(error)
            }
        }
    }
}
