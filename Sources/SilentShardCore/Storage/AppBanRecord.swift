import Foundation

/// What an app's ban record on a node holds (no secrets; duo and trio, session.md §9.4): `"SSBN" ‖ u8 version (1) ‖ u8 node index ‖ u64 banned-at ms ‖
/// instance id (32)` — the session in which the node failed the check, as evidence for support.
package struct AppBanRecord: Equatable, Sendable {
    package var nodeIndex: UInt8
    package var bannedAtMilliseconds: UInt64
    package var instanceID: InstanceID

    package init(nodeIndex: UInt8, bannedAtMilliseconds: UInt64, instanceID: InstanceID) {
        self.nodeIndex = nodeIndex
        self.bannedAtMilliseconds = bannedAtMilliseconds
        self.instanceID = instanceID
    }

    package var encoded: [UInt8] {
        var out = Array("SSBN".utf8) + [1, nodeIndex]
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bannedAtMilliseconds >> UInt64(shift))) }
        return out + instanceID.bytes
    }
}
