import MPCProtocols
import SilentShardCore

/// Performs ``NodeReconcile``'s actions at a node (duo, trio A, trio B) after its ACCEPT went out: the
/// store calls are the caller's, the frames go over the step's channel.
package enum NodeReconcileExecutor {
    /// The node's store operations; each answers how the generation stands and the current generation.
    package struct Store {
        package typealias Answer = (OutcomePayload.Outcome, [UInt8]?)
        /// Commit a PREPARED generation (trio; duo has none).
        package var commit: ((_ gen: Generation, _ digest: [UInt8]) async throws(NodeStoreError) -> Answer)?
        /// Tombstone a generation.
        package var rollback: (_ gen: Generation) async throws(NodeStoreError) -> Answer

        package init(commit: ((_ gen: Generation, _ digest: [UInt8]) async throws(NodeStoreError) -> Answer)? = nil,
                     rollback: @escaping (_ gen: Generation) async throws(NodeStoreError) -> Answer) {
            self.commit = commit
            self.rollback = rollback
        }
    }

    package static func run(_ reconcile: NodeReconcile, channel: inout PartyFrameChannel, store: Store,
                            send: SessionDriver.Send, read: SessionDriver.Read,
                            relay: SessionDriver.Relay = { _ throws(SilentShardError) in }) async -> NodeReconcile.Ending {
        var machine = reconcile
        var action = machine.start()
        while true {
            switch action {
            case .awaitDecision:
                action = machine.handle(await nextDecision(channel: &channel, read: read, relay: relay))
            case .commitStore(let gen, let digest):
                do throws(NodeStoreError) {
                    guard let commit = store.commit else { throw .invalidArgument("no PREPARED generations here") }
                    let (outcome, current) = try await commit(gen, digest)
                    action = machine.handle(.stored(outcome, currentGen: current.flatMap(Generation.init)))
                } catch {
                    action = machine.handle(.storeFailed)
                }
            case .rollbackStore(let gen):
                do throws(NodeStoreError) {
                    let (outcome, current) = try await store.rollback(gen)
                    action = machine.handle(.stored(outcome, currentGen: current.flatMap(Generation.init)))
                } catch {
                    action = machine.handle(.storeFailed)
                }
            case .sendOutcome(let payload):
                if let frame = try? channel.control(.outcome, payload: payload.encoded) { try? await send([frame]) }
                action = machine.handle(.sent)
            case .end(let ending):
                return ending
            }
        }
    }

    /// Reads until the app's DONE or COMMIT is buffered, or its ABORT (or any failure) arrives.
    private static func nextDecision(channel: inout PartyFrameChannel, read: SessionDriver.Read,
                                     relay: SessionDriver.Relay) async -> NodeReconcile.Event {
        while true {
            if channel.take(kind: .done, from: 0) != nil { return .done }
            if let frame = channel.take(kind: .commit, from: 0) { return .commit(try? CommitPayload(bytes: frame.payload)) }
            do throws(SilentShardError) {
                try await SessionDriver.receive(channel: &channel, read: read, relay: relay)
            } catch {
                if let abort = channel.aborts[0] { return .abort(abort, error: error) }
                return .failed(error)
            }
        }
    }
}
