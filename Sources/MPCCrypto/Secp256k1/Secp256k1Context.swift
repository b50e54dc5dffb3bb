internal import CSecp256k1

/// The process-wide libsecp256k1 context: created once, randomized against side channels, used
/// read-only afterwards (libsecp256k1 allows concurrent use of a context through `const` calls).
final class Secp256k1Context: @unchecked Sendable {
    static let shared = Secp256k1Context()

    let pointer: OpaquePointer

    private init() {
        // A context is never nil for valid flags.
        guard let context = secp256k1_context_create(silentshard_secp256k1_context_none()) else {
            preconditionFailure("secp256k1_context_create failed")
        }
        var seed = [UInt8](repeating: 0, count: 32)
        SecureRandom.fill(&seed)
        _ = secp256k1_context_randomize(context, seed)
        pointer = context
    }
}
