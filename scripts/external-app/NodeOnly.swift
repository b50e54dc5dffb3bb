// Must NOT typecheck outside the package: node-only wire code is `package`, never public (issue 18).
import duo
import trio

func nodeOnly() {
    _ = ReplayWindow.self
    _ = SetupValidator.self
    _ = PartyFrameChannel.self
    _ = DeviceKey.self
    _ = PresignatureStatusPayload.self
    _ = PresignatureRecord.self
    _ = PresignatureShelf.self
}
