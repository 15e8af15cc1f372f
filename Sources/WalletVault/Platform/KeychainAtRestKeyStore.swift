// Apple platforms only (iOS and macOS, the package's declared platforms); not compiled by this project's Linux CI,
// type-checked by shared/tools/apple-stubs. Written against Apple's documentation of SecItemAdd / SecItemCopyMatching,
// kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecUseDataProtectionKeychain and kSecUseAuthenticationContext.
#if (os(iOS) || os(macOS)) && canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security
    import VaultCrypto

    /// The at-rest key as a Keychain generic-password item, readable after the first unlock (background sync runs while
    /// the phone is locked), never synced, never migrated to another device; on macOS in the data protection keychain.
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
                // macOS: the data protection keychain, where ThisDeviceOnly applies (TN3137); ignored elsewhere.
                kSecUseDataProtectionKeychain as String: true,
            ]
            var query = base
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            // The item has no access control; a background sync must never wait on a prompt all the same.
            let context = LAContext()
            context.interactionNotAllowed = true
            query[kSecUseAuthenticationContext as String] = context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &found)
            if status == errSecSuccess {
                guard let data = found as? Data, data.count == 32 else {
                    throw SyncError(.localStorage, "the Keychain's at-rest key is damaged")
                }
                return SymmetricKey(data: data)
            }
            guard status == errSecItemNotFound else { throw SyncError(.localStorage, "the Keychain refused the at-rest key (\(status))") }
            #if os(macOS)
                // Builds before kSecUseDataProtectionKeychain stored it in the file-based keychain: move it, or this
                // profile's local copies could no longer be read.
                if let moved = try movedFromFileBasedKeychain(base) { return moved }
            #endif
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

        #if os(macOS)
            /// The key an earlier build kept in the file-based keychain, added to the data protection keychain and
            /// deleted from the old one; nil when there is none.
            private func movedFromFileBasedKeychain(_ base: [String: Any]) throws(SyncError) -> SymmetricKey? {
                var legacy = base
                legacy.removeValue(forKey: kSecUseDataProtectionKeychain as String)
                var query = legacy
                query[kSecReturnData as String] = true
                query[kSecMatchLimit as String] = kSecMatchLimitOne
                let context = LAContext()
                context.interactionNotAllowed = true
                query[kSecUseAuthenticationContext as String] = context
                var found: CFTypeRef?
                guard SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess, let data = found as? Data, data.count == 32
                else { return nil }
                var item = base
                item[kSecValueData as String] = data
                item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                item[kSecAttrSynchronizable as String] = false
                let added = SecItemAdd(item as CFDictionary, nil)
                guard added == errSecSuccess || added == errSecDuplicateItem else {
                    throw SyncError(.localStorage, "the Keychain refused to move the at-rest key (\(added))")
                }
                SecItemDelete(legacy as CFDictionary)
                return try atRestKey()
            }
        #endif
    }
#endif
