#if canImport(Security)
import Foundation
import Security

/// `KeychainItemStore` over the Keychain (generic-password items of one service; Apple only, not
/// compiled on Linux). Items use the data-protection Keychain, are never synchronized, and carry a
/// `…ThisDeviceOnly` accessibility. On macOS the app needs a keychain access group entitlement
/// (a signed app); otherwise calls fail with `errSecMissingEntitlement`.
struct SecurityKeychainItemStore: KeychainItemStore {
    let service: String
    let accessGroup: String?
    let accessibility: KeychainAccessibility

    private func query(_ account: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecAttrSynchronizable as String: false,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private var accessible: CFString {
        switch accessibility {
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        }
    }

    func data(account: String) throws(StorageError) -> [UInt8]? {
        var search = query(account)
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw .keychain(operation: "SecItemCopyMatching", status: status) }
        guard let data = result as? Data else { throw .keychain(operation: "SecItemCopyMatching", status: errSecInternalError) }
        return [UInt8](data)
    }

    func add(_ data: [UInt8], account: String) throws(StorageError) -> Bool {
        var item = query(account)
        item[kSecValueData as String] = Data(data)
        item[kSecAttrAccessible as String] = accessible
        let status = SecItemAdd(item as CFDictionary, nil)
        if status == errSecDuplicateItem { return false }
        guard status == errSecSuccess else { throw .keychain(operation: "SecItemAdd", status: status) }
        return true
    }

    func set(_ data: [UInt8], account: String) throws(StorageError) {
        let changes: [String: Any] = [kSecValueData as String: Data(data), kSecAttrAccessible as String: accessible]
        for _ in 0..<2 {  // update, else add; an add racing ours makes the second update succeed
            let status = SecItemUpdate(query(account) as CFDictionary, changes as CFDictionary)
            if status == errSecSuccess { return }
            guard status == errSecItemNotFound else { throw .keychain(operation: "SecItemUpdate", status: status) }
            if try add(data, account: account) { return }
        }
        throw .keychain(operation: "SecItemUpdate", status: errSecDuplicateItem)
    }

    func delete(account: String) throws(StorageError) {
        let status = SecItemDelete(query(account) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw .keychain(operation: "SecItemDelete", status: status)
        }
    }
}

extension KeychainStorageClient {
    /// Records in the Keychain under `service` (and `accessGroup`, to share them between an app and
    /// its extensions), encrypted under a key kept in the same service. Default accessibility: after
    /// first unlock, this device only. With `sealKeyInSecureEnclave` the key item is sealed by a Secure
    /// Enclave key (created on first write; needs a device with a Secure Enclave), so the Keychain's
    /// contents alone do not open the records. Choose once per service: the two keep different items.
    public init(service: String, accessGroup: String? = nil,
                accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly,
                sealKeyInSecureEnclave: Bool = false) {
        let items = SecurityKeychainItemStore(service: service, accessGroup: accessGroup, accessibility: accessibility)
        #if canImport(CryptoKit)
        self.init(items: items, sealer: sealKeyInSecureEnclave ? SecureEnclaveStorageKeySealer(items: items) : nil)
        #else
        self.init(items: items)
        #endif
    }
}
#endif
