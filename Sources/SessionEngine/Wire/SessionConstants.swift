/// Numeric constants of session version 1 (`docs/protocol/session.md` §3.6, §9.6, Appendix A).
package enum SessionConstants {
    /// The session version this implementation speaks (frame header byte 0).
    package static let sessionVersion: UInt8 = 1
    /// Session versions this implementation accepts, ascending.
    package static let supportedSessionVersions: [UInt8] = [1]
    /// The keyshare protocol version SETUP field 0x04 carries: 3 since protocol v3 (`docs/protocol/README.md`:
    /// per-row SoftSpokenOT check, PPRF proof at keygen, constant-time base OT). Nothing of versions 1 and 2
    /// was deployed; a SETUP naming either is refused with UNSUPPORTED_VERSION (`session.md` §4.3 step 2, §11).
    package static let protocolVersion: UInt8 = 3
    /// Keyshare protocol versions this implementation accepts in SETUP, ascending.
    package static let supportedProtocolVersions: [UInt8] = [3]

    /// The detail of an UNSUPPORTED_VERSION REJECT (`session.md` §10): `u8 count ‖ session versions ‖
    /// u8 count ‖ protocol versions`, so a peer learns both what frames and what keyshare protocols this
    /// side speaks.
    package static var unsupportedVersionDetail: [UInt8] {
        [UInt8(supportedSessionVersions.count)] + supportedSessionVersions
            + [UInt8(supportedProtocolVersions.count)] + supportedProtocolVersions
    }
    /// Frame header size.
    package static let headerByteCount = 48
    /// Length of an `instance_id`, `setup_hash`, `key_id`, `gen`, `D`.
    package static let idByteCount = 32
    /// Maximum transport message (bundle) size: 1 MiB.
    package static let maximumBundleByteCount = 1 << 20
    /// Maximum frames in one transport message.
    package static let maximumFramesPerBundle = 64
    /// Maximum authentication token size (UTF-8 bytes).
    package static let maximumTokenByteCount = 8_192
    /// Maximum EdDSA message to sign.
    package static let maximumEdDSAMessageByteCount = 32_768
    /// ECDSA message (hash) size.
    package static let ecdsaMessageByteCount = 32
    /// Maximum frames one sender may put into one session.
    package static let maximumFramesPerSender = 256
    /// Maximum buffered early frames per session (count and bytes).
    package static let maximumBufferedFrames = 64
    package static let maximumBufferedByteCount = 1 << 20
    /// Default SETUP timestamp window (±), milliseconds, and its MUST-bounds.
    package static let defaultTimestampWindowMilliseconds: UInt64 = 120_000
    package static let minimumTimestampWindowMilliseconds: UInt64 = 30_000
    package static let maximumTimestampWindowMilliseconds: UInt64 = 600_000
    /// The longest step (share operations), milliseconds; part of the replay-store retention.
    package static let longestStepMilliseconds: UInt64 = 120_000
    /// Certificate clock tolerance and maximum validity, seconds.
    package static let certificateClockToleranceSeconds: UInt64 = 600
    package static let certificateMaximumValiditySeconds: UInt64 = 400 * 86_400
    /// Maximum `detail` length in REJECT and ABORT.
    package static let maximumRejectDetailByteCount = 512
    package static let maximumAbortDetailByteCount = 256
    /// Maximum `client_info` (SETUP 0x80) and LINK_OPEN client address lengths.
    package static let maximumClientInfoByteCount = 64
    package static let maximumClientAddressByteCount = 64
    /// Default and maximum presignature lifetime, seconds; the app's expiry margin.
    package static let defaultPresignatureTTLSeconds: UInt32 = 86_400
    package static let maximumPresignatureTTLSeconds: UInt32 = 7 * 86_400
    package static let presignatureAppMarginSeconds: UInt64 = 60
    /// Default `staged_ttl` (PREPARED GC) and its lower bound, seconds.
    package static let defaultStagedTTLSeconds: UInt64 = 7 * 86_400
    package static let minimumStagedTTLSeconds: UInt64 = 86_400
    /// Timeouts, milliseconds: token, SETUP, per frame, whole step (share operations / others), DONE.
    package static let tokenTimeoutMilliseconds: UInt64 = 5_000
    package static let setupTimeoutMilliseconds: UInt64 = 10_000
    package static let frameTimeoutMilliseconds: UInt64 = 30_000
    package static let shareStepTimeoutMilliseconds: UInt64 = 120_000
    package static let otherStepTimeoutMilliseconds: UInt64 = 60_000
    package static let doneTimeoutMilliseconds: UInt64 = 5_000
}
