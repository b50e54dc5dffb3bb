import MPCCrypto
import Foundation

/// A test hook that parks one session of a node process at a named point of the commit path, so a
/// test can kill the process exactly there (issue 10: "kill the node between stage and commit").
///
/// **Compiled only into debug builds** (the fault tests run `.build/debug/silentshard`; a release build,
/// what production runs, has no hook), and inert there unless the process environment has
/// `SILENTSHARD_TEST_PAUSE` (read once at first use; nothing else can set it). Format: `SILENTSHARD_TEST_PAUSE=<point>[@<n>]:<marker path>`. The n-th
/// arrival at `<point>` (default the first) creates the file at `<marker path>` and then waits (a
/// suspended task: no thread is blocked) until the process is killed; other arrivals pass. Points:
/// * `running` — trio: a participating node after the ACCEPTs, before its first protocol round;
/// * `prepared` — trio: after the PREPARED transaction, before READY is sent;
/// * `committed` — trio and duo: after the commit transaction, before OUTCOME is sent;
/// * `commit-received` — duo: after the app's matching COMMIT, before the commit transaction.
///
/// Why a hook and not SIGSTOP at the n-th message: the window between a store transaction and the
/// next frame has no message of its own, so no signal sent from outside can land in it reliably.
package enum TestPause {
    /// A point of the commit path.
    package enum Point: String, Sendable {
        case running, prepared, committed
        case commitReceived = "commit-received"
    }

    #if DEBUG
    private static let configuration: (point: String, arrival: Int, marker: String)? = {
        guard let value = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_PAUSE"],
              let colon = value.firstIndex(of: ":")
        else { return nil }
        let marker = String(value[value.index(after: colon)...])
        let parts = value[..<colon].split(separator: "@", maxSplits: 1)
        guard !marker.isEmpty, let point = parts.first else { return nil }
        let arrival = parts.count == 2 ? Int(parts[1]) : 1
        guard let arrival, arrival >= 1 else { return nil }
        return (String(point), arrival, marker)
    }()
    private static let arrivals = LockedValue(0)
    #endif

    /// Parks the caller when the hook is configured for `point` and this is the chosen arrival.
    static func reach(_ point: Point) async {
        #if DEBUG
        guard let configuration, configuration.point == point.rawValue,
              arrivals.withLock({ count in count += 1; return count == configuration.arrival })
        else { return }
        _ = FileManager.default.createFile(atPath: configuration.marker, contents: Data(point.rawValue.utf8))
        // Until the test kills the process (a day is "forever" for a test; cancellation ends it too).
        try? await Task.sleep(for: .seconds(86_400))
        #endif
    }
}
