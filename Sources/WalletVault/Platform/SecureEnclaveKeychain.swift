// Apple platforms only. Not compiled by this project's Linux CI (no Apple toolchain there): written against Apple's
// documentation of SecureEnclave.P256.KeyAgreement.PrivateKey (init(compactRepresentable:accessControl:
// authenticationContext:), init(dataRepresentation:authenticationContext:), dataRepresentation, isAvailable),
// SecAccessControlCreateWithFlags, SecItemAdd / SecItemCopyMatching / SecItemDelete, LAContext (localizedReason,
// interactionNotAllowed) and LAError; and Apple's "Storing CryptoKit Keys in the Keychain". The rules around it
// (what a missing item or each failure means) are PlatformDeviceKeyStore's, tested on Linux with a fake.
#if canImport(CryptoKit) && canImport(Security) && canImport(LocalAuthentication)
    import CryptoKit
    import Foundation
    import LocalAuthentication
    import Security
    import VaultEnvelope

    /// The seed's iOS key (§3 step 3): a Secure Enclave P-256 key-agreement key usable only with the biometry enrolled
    /// when it was made (`[.privateKeyUsage, .biometryCurrentSet]`, `WhenUnlockedThisDeviceOnly`); its
    /// `dataRepresentation` is a Keychain generic-password item that is never synced and never leaves this device.
    ///
    /// Where there is no Secure Enclave (the Simulator, Macs without one) the fallback is a software P-256 key kept in
    /// the item itself, the item protected by the same access control (`.biometryCurrentSet`, `WhenUnlockedThisDeviceOnly`).
    /// Every use authenticates with a fresh `LAContext` carrying `localizedReason`: a reused context keeps answering
    /// from an old result.
    public struct SecureEnclaveKeychain: PlatformKeychain {
        private static let secureEnclaveKind: UInt8 = 1
        private static let fallbackKind: UInt8 = 2

        private let service: String
        private let account: String
        private let localizedReason: String

        /// A key stored under `service` and `account`; `localizedReason` is what Face ID / Touch ID shows.
        public init(service: String = "walletvault.device-key", account: String = "vault-kek", localizedReason: String) {
            self.service = service
            self.account = account
            self.localizedReason = localizedReason
        }

        private var itemQuery: [String: Any] {
            [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        }

        /// The item, read without prompting: the Secure Enclave key's `dataRepresentation`, or the fallback key's
        /// public key (its private key is read, with a prompt, when used).
        ///
        /// - Throws: `PlatformKeyError` for a Keychain failure other than "not found".
        public func readKeyItem() throws(PlatformKeyError) -> Data? {
            var query = itemQuery
            query[kSecReturnAttributes as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var found: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &found)
            guard status != errSecItemNotFound else { return nil }
            guard status == errSecSuccess, let attributes = found as? [String: Any],
                let generic = attributes[kSecAttrGeneric as String] as? Data,
                let kind = generic.first
            else { throw Self.error(status, "reading the key item") }
            guard kind == Self.secureEnclaveKind else { return generic }
            return Data([kind]) + (try readData(prompting: false))
        }

        /// Creates the key (in the Secure Enclave when there is one) and stores its item, replacing any.
        ///
        /// - Throws: `PlatformKeyError` when the key or the item cannot be created.
        public func createKey() throws(PlatformKeyError) -> any P256KeyAgreementKey {
            SecItemDelete(itemQuery as CFDictionary)
            var item = itemQuery
            item[kSecAttrSynchronizable as String] = false
            if SecureEnclave.isAvailable {
                let control = try Self.accessControl([.privateKeyUsage, .biometryCurrentSet])
                let key: SecureEnclave.P256.KeyAgreement.PrivateKey
                do {
                    key = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                        compactRepresentable: false, accessControl: control,
                        authenticationContext: LAContext())
                } catch {
                    throw .failed("the Secure Enclave could not create a key: \(error)")
                }
                item[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
                item[kSecAttrGeneric as String] = Data([Self.secureEnclaveKind])
                item[kSecValueData as String] = key.dataRepresentation
                try Self.add(item)
                return SecureEnclaveAgreementKey(
                    dataRepresentation: key.dataRepresentation, publicKey: key.publicKey, reason: localizedReason)
            }
            let key = P256.KeyAgreement.PrivateKey()
            item[kSecAttrAccessControl as String] = try Self.accessControl([.biometryCurrentSet])
            item[kSecAttrGeneric as String] = Data([Self.fallbackKind]) + key.publicKey.rawRepresentation
            item[kSecValueData as String] = key.rawRepresentation
            try Self.add(item)
            return FallbackAgreementKey(keychain: self, publicKey: key.publicKey)
        }

        /// The key an item read by `readKeyItem` holds.
        ///
        /// - Throws: `PlatformKeyError` `.invalidated` for an item that no longer yields a key.
        public func key(fromItem item: Data) throws(PlatformKeyError) -> any P256KeyAgreementKey {
            guard let kind = item.first else { throw .invalidated("the key item is empty") }
            let body = item.dropFirst()
            do {
                switch kind {
                case Self.secureEnclaveKind:
                    // Loading the key prompts no one; its use does, with a fresh context each time.
                    let key = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                        dataRepresentation: Data(body), authenticationContext: LAContext())
                    return SecureEnclaveAgreementKey(dataRepresentation: Data(body), publicKey: key.publicKey, reason: localizedReason)
                case Self.fallbackKind:
                    return FallbackAgreementKey(keychain: self, publicKey: try P256.KeyAgreement.PublicKey(rawRepresentation: body))
                default:
                    throw PlatformKeyError.invalidated("unknown key item kind \(kind)")
                }
            } catch let error as PlatformKeyError {
                throw error
            } catch {
                // A Secure Enclave key restored from another device's item cannot be loaded here.
                throw .invalidated("the key item does not load on this device: \(error)")
            }
        }

        /// The item's secret, prompting (with a fresh context) when its access control asks for the holder.
        fileprivate func readData(prompting: Bool) throws(PlatformKeyError) -> Data {
            var query = itemQuery
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            let context = LAContext()
            context.localizedReason = localizedReason
            context.interactionNotAllowed = !prompting
            query[kSecUseAuthenticationContext as String] = context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &found)
            guard status == errSecSuccess, let data = found as? Data else { throw Self.error(status, "reading the key") }
            return data
        }

        private static func accessControl(_ flags: SecAccessControlCreateFlags) throws(PlatformKeyError) -> SecAccessControl {
            guard let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags, nil) else {
                throw .failed("SecAccessControlCreateWithFlags failed")
            }
            return control
        }

        private static func add(_ item: [String: Any]) throws(PlatformKeyError) {
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw error(status, "storing the key item") }
        }

        private static func error(_ status: OSStatus, _ doing: String) -> PlatformKeyError {
            switch status {
            case errSecItemNotFound: .invalidated("\(doing): the item is gone")
            case errSecUserCanceled: .canceled
            case errSecAuthFailed: .invalidated("\(doing): the Keychain refused the current biometry")
            case errSecInteractionNotAllowed: .unavailable("\(doing): the device is locked")
            default: .failed("\(doing): OSStatus \(status)")
            }
        }

        /// What a failed biometric authentication means for the key.
        fileprivate static func error(_ error: any Error) -> PlatformKeyError {
            guard let error = error as? LAError else {
                // The Secure Enclave refuses a key whose biometry set changed; no LAError says so, so any other
                // refusal of the key in use is taken as the key having died, and the §7 recovery is offered.
                return .invalidated("the Secure Enclave refused the key: \(error)")
            }
            switch error.code {
            case .userCancel, .appCancel, .systemCancel, .userFallback: return .canceled
            case .biometryLockout, .biometryNotAvailable, .passcodeNotSet: return .unavailable("biometry is not usable now")
            case .biometryNotEnrolled: return .invalidated("no biometry is enrolled any more")
            default: return .failed("authentication failed: \(error.code.rawValue)")
            }
        }
    }

    /// A Secure Enclave key, loaded again with a fresh `LAContext` for every agreement so each use authenticates anew.
    private struct SecureEnclaveAgreementKey: P256KeyAgreementKey {
        let dataRepresentation: Data
        let publicKey: P256.KeyAgreement.PublicKey
        let reason: String

        func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
            let context = LAContext()
            context.localizedReason = reason
            do {
                let key = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                    dataRepresentation: dataRepresentation, authenticationContext: context)
                return try key.sharedSecretFromKeyAgreement(with: publicKeyShare)
            } catch {
                throw SecureEnclaveKeychain.error(error)
            }
        }
    }

    /// The fallback's software key, read from its protected item (a prompt) for every agreement.
    private struct FallbackAgreementKey: P256KeyAgreementKey {
        let keychain: SecureEnclaveKeychain
        let publicKey: P256.KeyAgreement.PublicKey

        func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
            var raw = try keychain.readData(prompting: true)
            defer { raw.resetBytes(in: raw.startIndex..<raw.endIndex) }
            let key: P256.KeyAgreement.PrivateKey
            do { key = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw) } catch {
                throw PlatformKeyError.invalidated("the fallback key item no longer holds a key")
            }
            return try key.sharedSecretFromKeyAgreement(with: publicKeyShare)
        }
    }
#endif
