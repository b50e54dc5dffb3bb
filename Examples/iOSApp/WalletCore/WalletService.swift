import SilentShardChains
import duo
import Foundation

/// Everything the sample wallet does with the SDK, with no UI: make a key with the node (duo, ECDSA), sign an
/// Ethereum `personal_sign` message, refresh the shares, and find the key again after a relaunch. The SwiftUI
/// app (`Examples/iOSApp/App`) drives it through ``WalletViewModel``; `ExamplesTests` runs it on Linux against an
/// embedded node, so this code is compiled and exercised by CI although the app itself needs Xcode.
public actor WalletService {
    /// A key the wallet holds: what the UI shows.
    public struct Account: Sendable, Equatable {
        /// The SDK's key id (the app remembers it to find the key again).
        public let keyId: String
        /// The key's Ethereum address, EIP-55 checksummed.
        public let address: String
        /// The share generation (changes on every refresh).
        public let generation: Data
    }

    private let session: DuoSession
    private var keyshare: Keyshare?

    public init(configuration: WalletConfiguration, device: WalletDevice) {
        session = SilentShard.ECDSA.duoInitiator(
            messageSigner: device.signer, cloudVerifyingKey: configuration.cloudVerifyingKey,
            websocketConfig: WebsocketConfig(url: configuration.nodeURL, authenticationToken: configuration.authenticationToken),
            storageClient: device.storage)
    }

    /// The current account, if the wallet has a key.
    public var account: Account? { keyshare.flatMap { try? Self.account(of: $0) } }

    /// Makes a new key with the node; the app's share is kept in the device's storage before this returns.
    public func createAccount() async throws -> Account {
        let made = try await session.keygen()
        keyshare = made
        return try Self.account(of: made)
    }

    /// Finds the key `keyId` again (after a relaunch): reconcile reads the share from storage and settles with the
    /// node anything a crash left undecided, so the app and the node hold the same generation.
    public func openAccount(keyId: String) async throws -> Account {
        let settled = try await session.reconcileKeyshare(keyId: keyId)
        keyshare = settled
        return try Self.account(of: settled)
    }

    /// Signs `message` as Ethereum `personal_sign` (EIP-191) and returns the 65-byte `r ‖ s ‖ v` signature, hex.
    /// The signature is checked to recover to the account's address before it is returned.
    public func signPersonalMessage(_ message: String) async throws -> String {
        guard let keyshare else { throw WalletError.noAccount }
        let session = session
        let signature = try await EthereumPersonalMessage.sign(Data(message.utf8), publicKey: keyshare.publicKey) { digest in
            try await session.signature(keyshare: keyshare, message: digest)
        }
        return "0x" + signature.rsv.map { String(format: "%02x", $0) }.joined()
    }

    /// Refreshes the shares with the node (same key and address, a new generation; old shares become useless).
    public func refresh() async throws -> Account {
        guard let keyshare else { throw WalletError.noAccount }
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        self.keyshare = refreshed
        return try Self.account(of: refreshed)
    }

    private static func account(of keyshare: Keyshare) throws -> Account {
        Account(keyId: keyshare.keyId, address: try EthereumAddress(publicKey: keyshare.publicKey).checksummed,
                generation: keyshare.generation)
    }
}

/// What the sample wallet itself can refuse.
public enum WalletError: Error, Sendable, Equatable {
    /// Sign or refresh before a key was made or opened.
    case noAccount
}
