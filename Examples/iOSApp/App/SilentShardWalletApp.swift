#if canImport(SwiftUI)
import SwiftUI
#if canImport(WalletCore)
import WalletCore
#endif

/// The sample wallet (iOS 18 / macOS 15): one duo ECDSA key with a node, shares in the Keychain, the device key
/// in the Secure Enclave. Not part of the Swift package: add this folder to an Xcode app target (README.md).
@main
struct SilentShardWalletApp: App {
    @State private var model: WalletViewModel?
    @State private var failure: String?

    var body: some Scene {
        WindowGroup {
            if let model {
                WalletView(model: model)
            } else {
                Text(failure ?? "Starting…").padding().task { await start() }
            }
        }
    }

    /// Edit `WalletConfiguration` in Info.plist-free form here for the sample; a real app reads it from its config.
    private func start() async {
        do {
            let configuration = WalletConfiguration(nodeURL: "wss://node.example.com",
                                                    cloudVerifyingKey: String(repeating: "0", count: 64))
            let device = try WalletDevice.appleDefault(service: Bundle.main.bundleIdentifier ?? "SilentShardWallet")
            let model = WalletViewModel(service: WalletService(configuration: configuration, device: device))
            await model.start(rememberedKeyId: UserDefaults.standard.string(forKey: "keyId"))
            self.model = model
        } catch {
            failure = "Could not open the device key: \(error)"
        }
    }
}
#endif
