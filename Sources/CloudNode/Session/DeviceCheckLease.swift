import Foundation
import SilentShardCore

/// How a node process holds and waits for a device's check lease (``DeviceCheckLease``, issue 33 item 4).
package struct DeviceCheckLeasePolicy: Sendable {
    /// How long a lease lasts on the store's clock. A step releases it when it ends; the expiry only ends the
    /// lease of a process that crashed while holding it (the device's ECDSA sign and preSign steps wait or
    /// get KEY_BUSY on every process until then).
    package var seconds: Int64
    /// The total of the waits between attempts before a step is refused with KEY_BUSY.
    package var maximumWait: Duration
    /// How one wait between attempts is waited out (the system clock; tests inject their own).
    package var sleep: @Sendable (Duration) async -> Void

    package init(seconds: Int64, maximumWait: Duration, sleep: @escaping @Sendable (Duration) async -> Void) {
        self.seconds = seconds
        self.maximumWait = maximumWait
        self.sleep = sleep
    }

    /// A 30 s lease; up to 5 s of waits (10 ms, doubling to 250 ms), well inside the app's 30 s frame deadline.
    package static let standard = DeviceCheckLeasePolicy(seconds: 30, maximumWait: .seconds(5)) { duration in
        try? await Task.sleep(for: duration)
    }

    /// The wait after the `attempt`-th busy attempt (0 = the first): 10 ms doubling, at most 250 ms.
    static func wait(after attempt: Int) -> Duration { .milliseconds(min(250, 10 << min(attempt, 5))) }
}

/// Issue 33 item 4 at a node: a DKLs23 signing or presigning step over a device's messages — where the
/// SoftSpokenOT, multiplication (μ) and Γ checks run, whose outcomes depend on bits of this node's
/// long-lived secrets — runs while this session holds the device's check lease in the store
/// (`NodeShareStore+DeviceCheckLeases`), so that across every process on the node's database one check of
/// the device runs at a time, and a failed check's ban is in the store before the next one can start:
///
/// 1. take the lease (one autocommit statement), then read the device's ban; another holder's lease: wait
///    (short polls, ``DeviceCheckLeasePolicy/maximumWait`` in all) and try again, then refuse the step with
///    KEY_BUSY (`keyBusy`, retryable; the device's messages were not looked at);
/// 2. banned: release, refuse with BANNED before the step runs;
/// 3. run the step — no transaction, lock or pool connection is held meanwhile;
/// 4. the step raised AbortAndBan(app): write the ban (`DeviceBanLedger.ban`, retried), then release; if the
///    ban could not be stored the lease is kept until it expires, so no other process checks the device
///    before then (this process refuses it from memory), and the step ends as a storage failure instead of
///    the ban's ABORT, so the check's outcome does not leave the node;
/// 5. release: delete this session's own row only; a row another holder took over meanwhile (this step ran
///    past the expiry) withholds the step's outcome (a storage failure).
///
/// The step's outcome leaves the node after it returns, so no outcome is seen before its ban is stored. A
/// process that crashes while holding a lease leaves it until its expiry; a check it ran and whose ban it had
/// not stored was never answered (its ABORT follows the ban's write), so a crash gives a cheater at most the
/// outcome it may infer from the crash itself: one guess per crash, at most.
struct DeviceCheckLease: Sendable {
    let bans: NodeBans
    let setup: ValidatedSetup

    /// Runs `advance` (step `step` of the session) under the device's check lease.
    func run(step: Int, advance: () async throws(SilentShardError) -> Void) async throws(SilentShardError) {
        let device = setup.deviceKey.identity, instanceID = setup.instanceID.bytes
        let ledger = bans.ledger, policy = ledger.leasePolicy
        // Unique per step and process (an instance id alone is unique per session only while the replay store holds).
        let holder = withUnsafeBytes(of: UUID().uuid) { Array($0) } + instanceID
        var waited = Duration.zero, attempt = 0
        while true {
            let found: NodeShareStore.DeviceCheckLeaseAttempt
            do {
                found = try await bans.onStore { store throws(NodeStoreError) in
                    try store.acquireDeviceCheckLease(deviceKey: device, holder: holder, seconds: policy.seconds)
                }
            } catch {
                // Without the lease the check could run beside another process's: refuse (retryable).
                NodeLogger.standardError.log("device check lease could not be taken (\(error)); step refused")
                throw .storage(reason: "device check lease")
            }
            if case .acquired(let banned) = found {
                if banned {
                    await release(device: device, holder: holder)
                    await ledger.checkHook(instanceID, step, .ended)
                    throw .partyBanned(party: .app)
                }
                break
            }
            await ledger.checkHook(instanceID, step, .leaseBusy)
            let wait = DeviceCheckLeasePolicy.wait(after: attempt)
            guard waited + wait <= policy.maximumWait else { throw .keyBusy }
            if Task.isCancelled { throw .cancelled }
            waited += wait
            attempt += 1
            await policy.sleep(wait)
        }
        await ledger.checkHook(instanceID, step, .checking)
        do {
            try await advance()
        } catch {
            if case .abortProtocolAndBanParty(party: .app) = error {
                // The ban reaches the store before the lease goes: the next holder reads it.
                guard await bans.store(banOf: setup) else {
                    // Not stored (this process refuses the device from memory): the lease is kept until it expires,
                    // and the check's outcome does not leave the node — the step ends as a storage failure, which a
                    // passing check meets too when the store is down (audit of issue 33 item 4, LOW-3).
                    NodeLogger.standardError.log("SECURITY: a device failed a consistency check and its ban could not be stored; "
                        + "the step ends as a storage failure and the device's check lease is kept until it expires")
                    await ledger.checkHook(instanceID, step, .ended)
                    throw .storage(reason: "ban")
                }
                if await release(device: device, holder: holder) == false {
                    NodeLogger.standardError.log("SECURITY: a device check lease was taken over while its check ran "
                        + "(the step outlived the lease's \(policy.seconds) s)")
                }
            } else {
                await release(device: device, holder: holder)
            }
            await ledger.checkHook(instanceID, step, .ended)
            throw error
        }
        // A lease taken over while the step ran (a stall longer than the expiry): another process may have run a
        // check of the device beside this one, so this step's outcome stays inside (audit of issue 33 item 4, LOW-2).
        let stillHeld = await release(device: device, holder: holder)
        await ledger.checkHook(instanceID, step, .ended)
        if stillHeld == false {
            NodeLogger.standardError.log("SECURITY: a device check lease was taken over while its check ran "
                + "(the step outlived the lease's \(policy.seconds) s); the step's outcome is withheld")
            throw .storage(reason: "device check lease lost")
        }
    }

    /// Deletes this step's lease row: whether it was still this step's (false: another holder took it over after
    /// it expired), nil when the store could not be reached (the row then expires; the device's steps wait until then).
    @discardableResult
    private func release(device: [UInt8], holder: [UInt8]) async -> Bool? {
        do {
            return try await bans.onStore { store throws(NodeStoreError) -> Bool in
                try store.releaseDeviceCheckLease(deviceKey: device, holder: holder)
            }
        } catch {
            NodeLogger.standardError.log("device check lease could not be released (\(error)); it expires")
            return nil
        }
    }
}
