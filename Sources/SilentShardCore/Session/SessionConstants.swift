/// Numeric constants of session version 1 (`specs/session.md` §3.6, §9.6, Appendix A).
public enum SessionConstants {
    /// The session version this implementation speaks (frame header byte 0).
    public static let sessionVersion: UInt8 = 1
    /// Session versions this implementation accepts, ascending.
    public static let supportedSessionVersions: [UInt8] = [1]
    /// The keyshare protocol version SETUP field 0x04 carries.
    public static let protocolVersion: UInt8 = 1
    /// Frame header size.
    public static let headerByteCount = 48
    /// Length of an `instance_id`, `setup_hash`, `key_id`, `gen`, `D`.
    public static let idByteCount = 32
    /// Maximum transport message (bundle) size: 1 MiB.
    public static let maximumBundleByteCount = 1 << 20
    /// Maximum frames in one transport message.
    public static let maximumFramesPerBundle = 64
    /// Maximum authentication token size (UTF-8 bytes).
    public static let maximumTokenByteCount = 8_192
    /// Maximum EdDSA message to sign.
    public static let maximumEdDSAMessageByteCount = 32_768
    /// ECDSA message (hash) size.
    public static let ecdsaMessageByteCount = 32
    /// Maximum frames one sender may put into one session.
    public static let maximumFramesPerSender = 256
    /// Maximum buffered early frames per session (count and bytes).
    public static let maximumBufferedFrames = 64
    public static let maximumBufferedByteCount = 1 << 20
    /// Default SETUP timestamp window (±), milliseconds, and its MUST-bounds.
    public static let defaultTimestampWindowMilliseconds: UInt64 = 120_000
    public static let minimumTimestampWindowMilliseconds: UInt64 = 30_000
    public static let maximumTimestampWindowMilliseconds: UInt64 = 600_000
    /// The longest step (share operations), milliseconds; part of the replay-store retention.
    public static let longestStepMilliseconds: UInt64 = 120_000
    /// Certificate clock tolerance and maximum validity, seconds.
    public static let certificateClockToleranceSeconds: UInt64 = 600
    public static let certificateMaximumValiditySeconds: UInt64 = 400 * 86_400
    /// Maximum `detail` length in REJECT and ABORT.
    public static let maximumRejectDetailByteCount = 512
    public static let maximumAbortDetailByteCount = 256
    /// Maximum `client_info` (SETUP 0x80) and LINK_OPEN client address lengths.
    public static let maximumClientInfoByteCount = 64
    public static let maximumClientAddressByteCount = 64
    /// Default and maximum presignature lifetime, seconds; the app's expiry margin.
    public static let defaultPresignatureTTLSeconds: UInt32 = 86_400
    public static let maximumPresignatureTTLSeconds: UInt32 = 7 * 86_400
    public static let presignatureAppMarginSeconds: UInt64 = 60
    /// Default `staged_ttl` (PREPARED GC) and its lower bound, seconds.
    public static let defaultStagedTTLSeconds: UInt64 = 7 * 86_400
    public static let minimumStagedTTLSeconds: UInt64 = 86_400
    /// Timeouts, milliseconds: token, SETUP, per frame, whole step (share operations / others), DONE.
    public static let tokenTimeoutMilliseconds: UInt64 = 5_000
    public static let setupTimeoutMilliseconds: UInt64 = 10_000
    public static let frameTimeoutMilliseconds: UInt64 = 30_000
    public static let shareStepTimeoutMilliseconds: UInt64 = 120_000
    public static let otherStepTimeoutMilliseconds: UInt64 = 60_000
    public static let doneTimeoutMilliseconds: UInt64 = 5_000
}
