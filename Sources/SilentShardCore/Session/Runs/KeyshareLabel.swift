import MPCProtocols

/// What a run that ends in a keyshare records in it besides the protocol's share: the mode and (trio)
/// the group. The group of a new trio key may be recorded after the first round (``SessionRun/recordGroup(_:)``).
package struct KeyshareLabel: Sendable {
    /// The keyshare's mode.
    package var mode: Keyshare.Mode
    /// The trio group (nil in duo, or until recorded).
    package var groupID: [UInt8]?

    /// A label for `mode` with `groupID`.
    package init(mode: Keyshare.Mode, groupID: [UInt8]?) {
        self.mode = mode
        self.groupID = groupID
    }

    /// The SDK keyshare of a DKLs23 share; a share that cannot be one is `abort(nil, .publicKeyMismatch)`.
    func keyshare(_ share: DKLsKeyshare) throws(ProtocolError) -> Keyshare {
        guard let keyshare = try? Keyshare(dkls: share, mode: mode, groupId: groupID) else {
            throw .abort(party: nil, reason: .publicKeyMismatch)
        }
        return keyshare
    }

    /// The SDK keyshare of a FROST share; a share that cannot be one is `abort(nil, .publicKeyMismatch)`.
    func keyshare(_ share: FROST.Keyshare) throws(ProtocolError) -> Keyshare {
        guard let keyshare = try? Keyshare(frost: share, mode: mode, groupId: groupID) else {
            throw .abort(party: nil, reason: .publicKeyMismatch)
        }
        return keyshare
    }
}
