// Apple platforms only; not compiled by this project's Linux CI. Written against Apple's documentation of
// SecItemAdd / SecItemCopyMatching and kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly.
#if canImport(Security)
    import Foundation
    import Security
    import VaultCrypto

    /// The at-rest key as a Keychain generic-password item, readable after the first unlock (background sync runs while
    /// the phone is locked), never synced, never migrated to another device.
    public struct KeychainAtRestKeyStore: AtRestKeyStore {
        private let service: String
        private let account: String

        /// Keeps the key under `service` and `account`.
        public init(service: String = "walletvault.at-rest-key", account: String = "vault") {
            self.service = service
            self.account = account
        }

        /// The stored key, or a new one stored first.
        ///
        /// - Throws: `SyncError` `.localStorage` when the Keychain refuses, or holds something that is not a key.
        public func atRestKey() throws(SyncError) -> SymmetricKey {
            let base: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            var query = base
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var found: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &found)
            if status == errSecSuccess {
                guard let data = found as? Data, data.count == 32 else {
                    throw SyncError(.localStorage, "the Keychain's at-rest key is damaged")
                }
                return SymmetricKey(data: data)
            }
            guard status == errSecItemNotFound else { throw SyncError(.localStorage, "the Keychain refused the at-rest key (\(status))") }
            let key = SymmetricKey(size: .bits256)
            var item = base
            item[kSecValueData as String] = key.withUnsafeBytes { Data($0) }
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            item[kSecAttrSynchronizable as String] = false
            let added = SecItemAdd(item as CFDictionary, nil)
            // Another writer stored one first: use theirs.
            if added == errSecDuplicateItem { return try atRestKey() }
            guard added == errSecSuccess else { throw SyncError(.localStorage, "the Keychain refused to store the at-rest key (\(added))") }
            return key
        }
    }
#endif
