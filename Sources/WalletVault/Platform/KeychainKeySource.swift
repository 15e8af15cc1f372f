// Apple platforms only (iOS and macOS, the package's declared platforms). Not compiled by this project's Linux CI,
// type-checked by shared/tools/apple-stubs: written against Apple's documentation of SecAccessControlCreateWithFlags,
// SecItemAdd / SecItemCopyMatching (kSecAttrAccessControl, kSecAttrGeneric, kSecUseAuthenticationContext,
// kSecUseDataProtectionKeychain) and LAContext.
#if (os(iOS) || os(macOS)) && canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security
    import VaultCrypto
    import VaultEnvelope

    /// The seed's alternative iOS key: a 256-bit AES key in a Keychain item that only the current biometry opens
    /// (`kSecAttrAccessControl` with `.biometryCurrentSet`, `WhenUnlockedThisDeviceOnly`), wrapping the DEK with AES-KW
    /// as a `SymmetricKEK`. Its `kek_id` is kept in the item's `kSecAttrGeneric`, readable without a prompt.
    public struct KeychainKeySource: StoredKeySource {
        private let service: String
        private let account: String
        private let localizedReason: String

        /// A key stored under `service` and `account`; `localizedReason` is what Face ID / Touch ID shows.
        public init(service: String = "walletvault.aes-kek", account: String = "vault-kek", localizedReason: String) {
            self.service = service
            self.account = account
            self.localizedReason = localizedReason
        }

        /// Creates a key, stores it (replacing any) and returns it as a key-encryption key.
        ///
        /// - Throws: `VaultEnvelopeError` `.keyStorage` when the Keychain refuses.
        public func createKEK() throws(VaultEnvelopeError) -> SymmetricKEK {
            let key = SymmetricKey(size: .bits256)
            let kekID = SymmetricKEK.kekID(of: key)
            guard let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .biometryCurrentSet, nil)
            else { throw VaultEnvelopeError(.keyStorage, "SecAccessControlCreateWithFlags failed") }
            SecItemDelete(query as CFDictionary)
            var item = query
            item[kSecAttrAccessControl as String] = control
            item[kSecAttrGeneric as String] = Data(kekID.utf8)
            item[kSecValueData as String] = key.withUnsafeBytes { Data($0) }
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw VaultEnvelopeError(.keyStorage, "the Keychain refused the key (\(status))") }
            return SymmetricKEK(source: self, kekID: kekID)
        }

        /// The stored key-encryption key, found without a prompt; nil when there is none.
        ///
        /// - Throws: `VaultEnvelopeError` `.keyStorage` when the Keychain refuses.
        public func storedKEK() throws(VaultEnvelopeError) -> SymmetricKEK? {
            var attributes = query
            attributes[kSecReturnAttributes as String] = true
            attributes[kSecMatchLimit as String] = kSecMatchLimitOne
            // Attributes need no authentication; the context makes sure no prompt is ever shown for them.
            let context = LAContext()
            context.interactionNotAllowed = true
            attributes[kSecUseAuthenticationContext as String] = context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(attributes as CFDictionary, &found)
            guard status != errSecItemNotFound else { return nil }
            guard status == errSecSuccess, let values = found as? [String: Any], let id = values[kSecAttrGeneric as String] as? Data else {
                throw VaultEnvelopeError(.keyStorage, "the Keychain refused the key's attributes (\(status))")
            }
            return SymmetricKEK(source: self, kekID: String(decoding: id, as: UTF8.self))
        }

        /// Reading the key asks for Face ID / Touch ID.
        public var requiresHolder: Bool { true }

        /// The key, read with a fresh `LAContext` (a reused one keeps answering from an old result).
        ///
        /// - Throws: `VaultEnvelopeError` `.invalidated` when the item is gone, `.userCanceled`, `.keyStorage` for other
        ///   refusals (a locked device, no UI, a failed authentication), which leave the key alone.
        public func loadKey() throws(VaultEnvelopeError) -> SymmetricKey {
            var read = query
            read[kSecReturnData as String] = true
            read[kSecMatchLimit as String] = kSecMatchLimitOne
            let context = LAContext()
            context.localizedReason = localizedReason
            // Inside PlatformDeviceKeyStore.withoutPrompts (a background task) no prompt is attempted.
            context.interactionNotAllowed = !PlatformDeviceKeyStore.promptsAllowed
            read[kSecUseAuthenticationContext as String] = context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(read as CFDictionary, &found)
            switch status {
            case errSecSuccess:
                guard let data = found as? Data, data.count == 32 else {
                    throw VaultEnvelopeError(.keyStorage, "the Keychain item is not a key")
                }
                return SymmetricKey(data: data)
            case errSecItemNotFound: throw VaultEnvelopeError(.invalidated, "the Keychain key is gone")
            // errSecAuthFailed is failed authentication, not a documented "biometry changed": the key is left alone.
            case errSecUserCanceled: throw VaultEnvelopeError(.userCanceled, "the prompt was cancelled")
            case errSecInteractionNotAllowed:
                throw VaultEnvelopeError(.keyStorage, "the Keychain key cannot be read now (locked, or no prompt can be shown)")
            default: throw VaultEnvelopeError(.keyStorage, "the Keychain refused the key (\(status))")
            }
        }

        private var query: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
                // macOS: the data protection keychain, where access control applies (TN3137); ignored elsewhere.
                kSecUseDataProtectionKeychain as String: true,
            ]
        }
    }
#endif
