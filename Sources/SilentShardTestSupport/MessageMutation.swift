import Foundation
import SilentShardCore

/// One way the bad-input tests damage a transport message (issue 10): cut in half, one bit flipped in
/// the header, the middle or the last byte, sent twice, its frames reversed, or replaced by the same
/// message of an earlier session.
public enum MessageMutation: String, CaseIterable, Sendable {
    case truncate, flipHeader, flipMiddle, flipLast, duplicate, reorder, replayEarlierSession

    /// `data` damaged this way. `earlier` is the same message of an earlier session (the replay; the
    /// message itself when there is none). A single-frame message cannot be reordered: it is duplicated.
    public func apply(to data: Data, earlier: Data?) -> Data {
        var bytes = [UInt8](data)
        guard !bytes.isEmpty else { return data }
        switch self {
        case .truncate: return Data(bytes.prefix(bytes.count / 2))
        case .flipHeader: bytes[min(5, bytes.count - 1)] ^= 0x10
        case .flipMiddle: bytes[bytes.count / 2] ^= 0x01
        case .flipLast: bytes[bytes.count - 1] ^= 0x80
        case .duplicate: return data + data
        case .reorder:
            guard let frames = try? Frame.parseBundle(bytes), frames.count >= 2 else { return data + data }
            return Data(frames.reversed().flatMap { $0.encoded() })
        case .replayEarlierSession: return earlier ?? data
        }
        return Data(bytes)
    }
}
