#if canImport(SwiftUI)
import SwiftUI
#if canImport(WalletCore)
import WalletCore
#endif

/// The sample's only screen: make a key, sign a message, refresh the shares.
struct WalletView: View {
    let model: WalletViewModel
    @State private var message = "Hello from SilentShard"

    var body: some View {
        Form {
            Section("Key") {
                if let account = model.account {
                    Text(account.address).font(.footnote.monospaced()).textSelection(.enabled)
                    Button("Refresh shares") { Task { await model.refresh() } }
                } else {
                    Button("Create key") {
                        Task {
                            await model.createAccount()
                            if let keyId = model.account?.keyId { UserDefaults.standard.set(keyId, forKey: "keyId") }
                        }
                    }
                }
            }
            Section("Sign (personal_sign)") {
                TextField("Message", text: $message)
                Button("Sign") { Task { await model.sign(message) } }.disabled(model.account == nil)
                if let signature = model.lastSignature {
                    Text(signature).font(.caption.monospaced()).textSelection(.enabled)
                }
            }
            Section { Text(model.status).foregroundStyle(.secondary) }
        }
        .disabled(model.isBusy)
    }
}
#endif
