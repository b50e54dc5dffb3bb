import Foundation
import Observation

/// The sample app's screen state over ``WalletService``: what SwiftUI observes. Main-actor isolated like any view
/// model; every SDK call runs in the service (an actor), never on the main thread's time.
@MainActor
@Observable
public final class WalletViewModel {
    /// What the wallet holds.
    public private(set) var account: WalletService.Account?
    /// The last signature, hex (`personal_sign`).
    public private(set) var lastSignature: String?
    /// A line for the user: what is happening or what went wrong (never secret material).
    public private(set) var status = "No key yet"
    /// Whether an operation is running (buttons disable themselves).
    public private(set) var isBusy = false

    private let service: WalletService

    public init(service: WalletService) { self.service = service }

    /// Opens the remembered key, if the app has one, else leaves the wallet empty.
    public func start(rememberedKeyId: String?) async {
        guard let keyId = rememberedKeyId else { return }
        await run("Opening key…") { service in try await service.openAccount(keyId: keyId) }
    }

    public func createAccount() async {
        await run("Creating a key with the node…") { service in try await service.createAccount() }
    }

    public func refresh() async {
        await run("Refreshing shares…") { service in try await service.refresh() }
    }

    public func sign(_ message: String) async {
        guard !isBusy else { return }
        isBusy = true
        status = "Signing…"
        defer { isBusy = false }
        do {
            lastSignature = try await service.signPersonalMessage(message)
            status = "Signed"
        } catch {
            status = "Signing failed: \(error)"
        }
    }

    private func run(_ working: String, _ body: @Sendable (WalletService) async throws -> WalletService.Account) async {
        guard !isBusy else { return }
        isBusy = true
        status = working
        defer { isBusy = false }
        do {
            let opened = try await body(service)
            account = opened
            status = "Key \(opened.address)"
        } catch {
            status = "Failed: \(error)"
        }
    }
}
