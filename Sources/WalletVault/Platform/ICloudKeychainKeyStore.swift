// Apple platforms only (iOS and macOS, the package's declared platforms); not compiled by this project's Linux CI,
// type-checked by shared/tools/apple-stubs. Written against Apple's documentation of kSecAttrSynchronizable
// (https://developer.apple.com/documentation/security/ksecattrsynchronizable), kSecAttrAccessible and
// kSecAttrAccessibleAfterFirstUnlock, SecItemAdd / SecItemCopyMatching / SecItemUpdate / SecItemDelete,
// kSecUseAuthenticationContext and LAContext.interactionNotAllowed.
#if (os(iOS) || os(macOS)) && canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security

    /// The iCloud Keychain recovery key's item: a generic password that iCloud Keychain syncs to every device of the
    /// user's Apple account where iCloud Keychain is on, readable after the first unlock, with no access control.
    ///
    /// Why each attribute:
    /// - `kSecAttrSynchronizable: true` on every query: "If the key is not supplied, or has a value of
    ///   kCFBooleanFalse, then no synchronizable items are added or returned", and "updating or deleting items using
    ///   the kSecAttrSynchronizable key affects all copies of the item, not just the one on your local device"
    ///   (kSecAttrSynchronizable): a revoked key is deleted everywhere.
    /// - `kSecAttrAccessibleAfterFirstUnlock`: a synchronizable item "may not also specify a kSecAttrAccessible value
    ///   that is incompatible with syncing (namely, those whose names end with ThisDeviceOnly)" (kSecAttrSynchronizable;
    ///   the same on https://developer.apple.com/documentation/security/ksecattraccessible); of the others, the one
    ///   "recommended for items that need to be accessed by background applications"
    ///   (https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlock), so a background
    ///   rotation can re-wrap it while the phone is locked.
    /// - No `kSecAttrAccessControl`: a biometry-bound item (`.biometryCurrentSet`) is tied to one device's enrolled
    ///   biometry and could never open on the new phone it exists for. What guards the item is iCloud Keychain's own
    ///   end-to-end encryption and the device passcode (README, "The iCloud Keychain recovery key").
    /// - Queries use only the class, attributes, `kSecMatchLimit` and `kSecReturnData` to search: for synchronizable
    ///   items "search keys are limited to the item's class and attributes. The only search constant that may be used
    ///   is kSecMatchLimit", and they "cannot be specified by reference" (kSecAttrSynchronizable). The read also passes
    ///   a non-interactive `kSecUseAuthenticationContext` (a `kSecUse` key, not a search key), as every read here does:
    ///   the item has no access control, and the context makes sure no prompt could ever be shown for it.
    /// - Synchronizable items on macOS behave like iOS items (data protection keychain) by themselves
    ///   (kSecAttrSynchronizable); `kSecUseDataProtectionKeychain` is set anyway, as every other query here does.
    public struct ICloudKeychainKeyStore: SyncedKeyStore {
        private let service: String
        private let account: String

        /// Keeps the key under `service` and `account`: give each app profile (each vault) its own pair.
        public init(service: String = "walletvault.icloud-recovery-key", account: String = "vault") {
            self.service = service
            self.account = account
        }

        private var query: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
                kSecAttrSynchronizable as String: true, kSecUseDataProtectionKeychain as String: true,
            ]
        }

        /// The stored key, nil when there is none here (none stored, deleted, or not synced to this device yet).
        ///
        /// - Throws: `PlatformKeyError` `.unavailable` before the first unlock (`errSecInteractionNotAllowed`),
        ///   `.failed` for other refusals.
        public func readSyncedKey() throws(PlatformKeyError) -> Data? {
            var read = query
            read[kSecReturnData as String] = true
            read[kSecMatchLimit as String] = kSecMatchLimitOne
            let context = LAContext()
            context.interactionNotAllowed = true
            read[kSecUseAuthenticationContext as String] = context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(read as CFDictionary, &found)
            switch status {
            case errSecSuccess:
                guard let data = found as? Data else { throw .failed("the iCloud Keychain item holds no data") }
                return data
            case errSecItemNotFound: return nil
            case errSecInteractionNotAllowed: throw .unavailable("the device has not been unlocked since it started (-25308)")
            default: throw .failed("reading the iCloud Keychain item: OSStatus \(status)")
            }
        }

        /// Stores `key` in place of any stored one; the change syncs to every device of the account.
        ///
        /// - Throws: `PlatformKeyError` when the Keychain refuses.
        public func storeSyncedKey(_ key: Data) throws(PlatformKeyError) {
            var item = query
            item[kSecValueData as String] = key
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            let added = SecItemAdd(item as CFDictionary, nil)
            guard added == errSecDuplicateItem else {
                guard added == errSecSuccess else { throw Self.error(added, "storing the iCloud Keychain item") }
                return
            }
            // One is stored (this device's, or synced from another): it is replaced, not kept beside.
            let updated = SecItemUpdate(query as CFDictionary, [kSecValueData as String: key] as CFDictionary)
            guard updated == errSecSuccess else { throw Self.error(updated, "replacing the iCloud Keychain item") }
        }

        /// Deletes the item here and, through iCloud Keychain, on every device of the account.
        ///
        /// - Throws: `PlatformKeyError` when the Keychain refuses.
        public func deleteSyncedKey() throws(PlatformKeyError) {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw Self.error(status, "deleting the iCloud Keychain item")
            }
        }

        private static func error(_ status: OSStatus, _ doing: String) -> PlatformKeyError {
            status == errSecInteractionNotAllowed
                ? .unavailable("\(doing): the device is locked (-25308)") : .failed("\(doing): OSStatus \(status)")
        }
    }
#endif
