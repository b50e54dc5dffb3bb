// silentshard-test-limits: one node process's rate limiter over a shared node database, driven line by
// line on stdin, for the tests that count session.md §9.5 limits across processes (ClusterRateLimitProcessTests).
// Test-only; not shipped.
//
//   silentshard-test-limits --database SQLITE-PATH|POSTGRES-URL --master-key HEX --rate-limits SPEC
//
// Every command carries the time (wall-clock ms) both of the limiter's clocks read while it runs, so
// windows never depend on how long the processes take. Commands and answers (one line each):
//
//   device-failed PRINCIPAL DEVICE-HEX NOW       → ok
//   device-check PRINCIPAL DEVICE-HEX NOW        → allowed | limited SECONDS | storage-failure
//   key-creations PRINCIPAL NOW COUNT            → allowed N  (N of COUNT attempts admitted)
//   auth-failed ADDRESS NOW                      → ok
//   address-check ADDRESS NOW                    → allowed | limited SECONDS
//
// And a device's check lease (issue 33 item 4, ClusterCheckLeaseProcessTests; the store's clock reads NOW too):
//
//   lease-acquire DEVICE-HEX HOLDER-HEX SECONDS NOW → acquired | acquired banned | busy | storage-failure
//   lease-release DEVICE-HEX HOLDER-HEX NOW         → released | absent | storage-failure
//
// `ready` is printed once the store is open; a bad line prints `error …`; end of input exits 0.

import CloudNode
import Foundation
import MPCCrypto

func answer(_ line: String) {
    print(line)
    fflush(nil)
}

func verdict(_ verdict: RateLimitVerdict?) -> String {
    switch verdict {
    case .allowed?: "allowed"
    case .limited(let seconds)?: "limited \(seconds)"
    case nil: "storage-failure"
    }
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let name = arguments.next() { options[name] = arguments.next() ?? "" }

let now = LockedValue<UInt64>(0)
let clock: @Sendable () -> UInt64 = { now.withLock { $0 } }
let limiter: NodeRateLimiter
let leaseStore: NodeShareStore
do {
    guard let database = options["--database"], let keyHex = options["--master-key"],
          let keyBytes = try? Hex.decode(keyHex)
    else { answer("error usage: --database LOCATION --master-key HEX --rate-limits SPEC"); exit(2) }
    let store = try NodeShareStore(location: NodeStoreLocation(database), masterKey: try NodeMasterKey(bytes: keyBytes))
    limiter = NodeRateLimiter(limits: try NodeRateLimits(parsing: options["--rate-limits"] ?? "standard"), clock: clock,
                              cluster: ClusterRateLimits(store: store, clock: clock))
    leaseStore = try NodeShareStore(location: NodeStoreLocation(database), masterKey: try NodeMasterKey(bytes: keyBytes),
                                    clock: { Date(timeIntervalSince1970: TimeInterval(clock()) / 1000) })
} catch {
    answer("error \(error)")
    exit(1)
}
answer("ready")

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first, words.count >= 3, let time = UInt64(words[words.count - (command == "key-creations" ? 2 : 1)])
    else { answer("error bad line"); continue }
    now.withLock { $0 = time }
    switch command {
    case "device-failed" where words.count == 4:
        guard let device = try? Hex.decode(words[2]) else { answer("error bad device"); continue }
        await limiter.recordDeviceSignatureFailure(device, principal: words[1])
        answer("ok")
    case "device-check" where words.count == 4:
        guard let device = try? Hex.decode(words[2]) else { answer("error bad device"); continue }
        answer(verdict(await limiter.checkDeviceAcrossCluster(device, principal: words[1])))
    case "key-creations" where words.count == 4:
        guard let count = Int(words[3]) else { answer("error bad count"); continue }
        var allowed = 0
        for _ in 0..<count where await limiter.startKeyCreationAcrossCluster(principal: words[1]) == .allowed { allowed += 1 }
        answer("allowed \(allowed)")
    case "auth-failed" where words.count == 3:
        await limiter.recordAuthenticationFailure(from: words[1])
        answer("ok")
    case "address-check" where words.count == 3:
        answer(verdict(await limiter.checkAddressAcrossCluster(words[1])))
    case "lease-acquire" where words.count == 5:
        guard let device = try? Hex.decode(words[1]), let holder = try? Hex.decode(words[2]), let seconds = Int64(words[3])
        else { answer("error bad lease"); continue }
        switch try? leaseStore.acquireDeviceCheckLease(deviceKey: device, holder: holder, seconds: seconds) {
        case .acquired(let banned)?: answer(banned ? "acquired banned" : "acquired")
        case .busy?: answer("busy")
        case nil: answer("storage-failure")
        }
    case "lease-release" where words.count == 4:
        guard let device = try? Hex.decode(words[1]), let holder = try? Hex.decode(words[2]) else { answer("error bad lease"); continue }
        switch try? leaseStore.releaseDeviceCheckLease(deviceKey: device, holder: holder) {
        case true?: answer("released")
        case false?: answer("absent")
        case nil: answer("storage-failure")
        }
    default:
        answer("error unknown command")
    }
}
