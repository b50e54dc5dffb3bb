import MPCProtocols

/// Performs ``AppCommit``'s actions for the app (duo and trio alike): the storage calls are the
/// caller's, the frames go over the step's channel. Every decision is the machine's.
package enum AppCommitExecutor {
    /// The app's storage operations on the staged share.
    package struct Storage {
        package var stage: () async throws(SilentShardError) -> Void
        package var promote: () async throws(SilentShardError) -> Void
        package var discard: () async -> Void

        package init(stage: @escaping () async throws(SilentShardError) -> Void,
                     promote: @escaping () async throws(SilentShardError) -> Void,
                     discard: @escaping () async -> Void) {
            self.stage = stage
            self.promote = promote
            self.discard = discard
        }

        /// The operations on `keyId`'s record in `storageClient`, staging `share`.
        package init(_ storageClient: any StorageClient, keyId: String, staging share: StoredShare) {
            self.init(stage: { () throws(SilentShardError) in
                do { try await storageClient.stage(keyId: keyId, share) } catch { throw SilentShardError(storage: error) }
            }, promote: { () throws(SilentShardError) in
                do { _ = try await storageClient.promote(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            }, discard: {
                try? await storageClient.discardStaged(keyId: keyId)
            })
        }
    }

    /// session.md §7.2 for `keyshare` at `nodes` under `policy`, over `channel`: the keyshare once every node
    /// committed and it is current; `reconcileRequired` when in doubt; else the commit's error.
    package static func commit(_ keyshare: Keyshare, policy: AppCommit.Policy, nodes: [PartyIndex],
                               channel: inout PartyFrameChannel, storage: (_ digest: [UInt8]) -> Storage,
                               send: SessionDriver.Send, read: SessionDriver.Read) async throws(SilentShardError) -> Keyshare {
        let keyID = keyshare.keyID, gen = keyshare.gen
        let digest = channel.commitDigest(keyID: keyID, gen: gen)
        let commit = AppCommit(policy: policy, nodes: nodes, keyID: keyID, gen: gen, digest: digest)
        switch await run(commit, channel: &channel, storage: storage(digest), send: send, read: read) {
        case .committed: return keyshare
        case .failed(let error, _): throw error
        case .inDoubt: throw .reconcileRequired(keyId: keyshare.keyId)
        }
    }

    /// Runs `commit` to its end. A failure of ours before COMMIT is sent to the nodes as ABORT (best
    /// effort) before the ending is returned.
    package static func run(_ commit: AppCommit, channel: inout PartyFrameChannel, storage: Storage,
                            send: SessionDriver.Send, read: SessionDriver.Read) async -> AppCommit.Ending {
        var machine = commit
        var action = machine.start()
        while true {
            switch action {
            case .stage:
                do throws(SilentShardError) {
                    try await storage.stage()
                    action = machine.handle(.staged)
                } catch {
                    action = machine.handle(.stageFailed(error))
                }
            case .sendCommit:
                do throws(SilentShardError) {
                    try await send([try channel.control(.commit, payload: machine.commitPayload.encoded)])
                    action = machine.handle(.commitSent)
                } catch {
                    action = machine.handle(.linkFailed)
                }
            case .awaitAnswer:
                action = machine.handle(await nextAnswer(channel: &channel, read: read))
            case .promote:
                do throws(SilentShardError) {
                    try await storage.promote()
                    action = machine.handle(.promoted)
                } catch {
                    action = machine.handle(.promoteFailed)
                }
            case .discard:
                await storage.discard()
                action = machine.handle(.discarded)
            case .end(let ending):
                if case .failed(let error, sendAbort: true) = ending,
                   let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                    try? await send([frame])
                }
                return ending
            }
        }
    }

    /// Reads until a node's OUTCOME is buffered or a node's ABORT arrives.
    private static func nextAnswer(channel: inout PartyFrameChannel, read: SessionDriver.Read) async -> AppCommit.Event {
        while true {
            if let frame = channel.take(kind: .outcome) {
                return .outcome(from: frame.header.sender, try? OutcomePayload(bytes: frame.payload))
            }
            let known = Set(channel.aborts.keys)
            do throws(SilentShardError) {
                try await SessionDriver.receive(channel: &channel, read: read, relay: { _ throws(SilentShardError) in })
            } catch {
                if let (node, payload) = channel.aborts.sorted(by: { $0.key < $1.key }).first(where: { !known.contains($0.key) }) {
                    return .abort(from: node, payload)
                }
                return .linkFailed
            }
        }
    }
}
