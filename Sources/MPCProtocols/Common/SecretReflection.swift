import MPCCrypto

// Types that hold secret material reflect no children (see `SecretReflecting`): `dump(keyshare)`
// shows the type name only. Their `description`s show public fields.

extension DKLsKeyshare: SecretReflecting {}
extension DKLsPresignature: SecretReflecting {}
extension DKLsDKG.Round1State: SecretReflecting {}
extension DKLsDKG.Round2State: SecretReflecting {}
extension DKLsDKG.Round3State: SecretReflecting {}
extension DKLsSign.Round1State: SecretReflecting {}
extension DKLsSign.Round2State: SecretReflecting {}
extension DKLsDKG.Mode: SecretReflecting {}
extension GF256: SecretReflecting {}
extension GF128: SecretReflecting {}
extension SoftSpokenOT.ReceiverSetup: SecretReflecting {}
extension SoftSpokenOT.SenderSetup: SecretReflecting {}
extension RVOLE.BobState: SecretReflecting {}

extension FROST.Keyshare: SecretReflecting {}
extension FROST.Presignature: SecretReflecting {}
extension FROST.KeyGeneration: SecretReflecting {}
extension FROST.KeyGeneration.Round1State: SecretReflecting {}
extension FROST.KeyGeneration.Round2State: SecretReflecting {}
extension FROST.ImportedKey: SecretReflecting {}
extension FROST.RepairHelper: SecretReflecting {}
extension FROST.RepairRecipient: SecretReflecting {}
extension FROST.SigningSession: SecretReflecting {}
