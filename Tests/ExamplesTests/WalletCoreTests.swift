import ExampleSupport
import Foundation
import SilentShardChains
import SilentShardTestTraits
import Testing
import WalletCore
import duo

/// The sample iOS wallet's logic (Examples/iOSApp/WalletCore) against an embedded node over WebSocket, with the
/// same kind of store the app uses (encrypted at rest) and a software device key standing in for the Secure
/// Enclave: a key, a `personal_sign` signature that recovers to its address, a refresh, and the key found again
/// by a fresh service (a relaunch) that signs with the refreshed share.
@Suite("Sample iOS wallet logic", .heavy, .timeLimit(.minutes(30)))
struct WalletCoreTests {
    struct FixedKey: StorageKeyProvider {
        let key = StorageKey.random()
        func storageKey() async throws -> StorageKey { key }
    }

    @Test func createSignRefreshAndReopen() async throws {
        let node = try EmbeddedNode()
        let url = try #require(node.url)
        let configuration = WalletConfiguration(nodeURL: url, cloudVerifyingKey: node.cloudVerifyingKey)
        let device = WalletDevice(storage: EncryptedStorageClient(wrapping: InMemoryStorageClient(), keyProvider: FixedKey()),
                                  signer: SoftwareP256MessageSigner())
        let wallet = WalletService(configuration: configuration, device: device)
        await #expect(throws: WalletError.noAccount) { _ = try await wallet.signPersonalMessage("too early") }

        let account = try await wallet.createAccount()
        #expect(account.address.hasPrefix("0x") && account.address.count == 42)
        try await Self.expectSigned("first", by: account.address, wallet)

        let refreshed = try await wallet.refresh()
        #expect(refreshed.address == account.address && refreshed.keyId == account.keyId)
        #expect(refreshed.generation != account.generation)

        // A relaunch: a new service over the same device finds the refreshed key by its id.
        let relaunched = WalletService(configuration: configuration, device: device)
        let reopened = try await relaunched.openAccount(keyId: account.keyId)
        #expect(reopened == refreshed)
        try await Self.expectSigned("after relaunch", by: account.address, relaunched)
        await node.stop()
    }

    @MainActor @Test func theViewModelReportsProgressAndErrors() async throws {
        let node = try EmbeddedNode()
        let url = try #require(node.url)
        let device = WalletDevice(storage: InMemoryStorageClient(), signer: SoftwareEd25519MessageSigner())
        let model = WalletViewModel(service: WalletService(
            configuration: WalletConfiguration(nodeURL: url, cloudVerifyingKey: node.cloudVerifyingKey), device: device))
        await model.createAccount()
        let account = try #require(model.account)
        await model.sign("hello")
        let signature = try #require(model.lastSignature)
        let rsv = try #require(Data(hexString: String(signature.dropFirst(2))))
        let recovered = try EthereumPersonalMessage.signer(of: Data("hello".utf8), signature: EthereumSignature(rsv: rsv))
        #expect(recovered.checksummed == account.address)
        #expect(model.status == "Signed" && !model.isBusy)
        // A wrong cloud key: the failure reaches the status line, nothing is kept.
        let wrong = WalletViewModel(service: WalletService(
            configuration: WalletConfiguration(nodeURL: url, cloudVerifyingKey: String(repeating: "ab", count: 32)), device: device))
        await wrong.createAccount()
        #expect(wrong.account == nil && wrong.status.hasPrefix("Failed"))
        await node.stop()
    }

    static func expectSigned(_ message: String, by address: String, _ wallet: WalletService) async throws {
        let hex = try await wallet.signPersonalMessage(message)
        let rsv = try #require(Data(hexString: String(hex.dropFirst(2))))
        #expect(rsv.count == 65)
        let signer = try EthereumPersonalMessage.signer(of: Data(message.utf8), signature: EthereumSignature(rsv: rsv))
        #expect(signer.checksummed == address)
    }
}

extension Data {
    init?(hexString: String) {
        guard hexString.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            guard let byte = UInt8(hexString[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
