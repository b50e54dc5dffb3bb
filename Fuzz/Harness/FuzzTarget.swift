import Synchronization

/// One fuzz target: a decoder (or a protocol round) of outside bytes and the checks around it.
///
/// `run` must return for every input: decoders throw typed errors, never trap. A failed `expect`
/// (a round trip that does not hold, a result outside its bounds) stops the process, which libFuzzer
/// reports as a finding.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    /// A few valid encodings (the seed corpus, Fuzz/corpus/<name>/).
    let seeds: @Sendable () -> [[UInt8]]
    /// Builds fixtures ahead of the first input (so the first runs are not slow).
    let prepare: @Sendable () -> Void
    let run: @Sendable ([UInt8]) -> Void

    init(name: String, summary: String, seeds: @escaping @Sendable () -> [[UInt8]],
         prepare: @escaping @Sendable () -> Void = {}, run: @escaping @Sendable ([UInt8]) -> Void) {
        self.name = name
        self.summary = summary
        self.seeds = seeds
        self.prepare = prepare
        self.run = run
    }
}

enum FuzzTargets {
    static let all: [FuzzTarget] = [
        TransportTargets.transport,
        SessionTargets.frame, SessionTargets.setup, SessionTargets.payloads, SessionTargets.setupValidator,
        DKLsTargets.dkg, DKLsTargets.sign, DKLsTargets.deriveExport,
        FROSTTargets.messages,
        KeyshareTargets.keyshares,
        NodeTargets.auth,
        ChainTargets.ethereum,
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// A harness invariant: on failure the process stops (a libFuzzer finding). Never secrets in `message`.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant failed: \(message())") }
}

/// Counts inputs a decoder accepted (replay reports it, so seeds are known to reach the success paths).
let acceptedInputs = Atomic<Int>(0)

/// Marks the current input as accepted by the decoder or round under test.
func accepted() { acceptedInputs.add(1, ordering: .relaxed) }

/// Splits an input into a selector byte and the rest.
func split(_ bytes: [UInt8]) -> (selector: UInt8, rest: [UInt8])? {
    guard let first = bytes.first else { return nil }
    return (first, Array(bytes.dropFirst()))
}
