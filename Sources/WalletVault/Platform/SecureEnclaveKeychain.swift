// Apple platforms only (iOS and macOS, the package's declared platforms: watchOS and tvOS have no
// LAContext.localizedReason). Not compiled by this project's Linux CI (no Apple toolchain there); type-checked by
// shared/tools/apple-stubs. Written against Apple's documentation of SecureEnclave.P256.KeyAgreement.PrivateKey
// (init(compactRepresentable:accessControl:authenticationContext:), init(dataRepresentation:authenticationContext:),
// dataRepresentation, isAvailable), SecAccessControlCreateWithFlags, SecItemAdd / SecItemCopyMatching / SecItemUpdate /
// SecItemDelete, kSecUseAuthenticationContext, kSecUseDataProtectionKeychain, LAContext (localizedReason,
// interactionNotAllowed, canEvaluatePolicy, evaluatedPolicyDomainState) and LAError; and Apple's "Storing CryptoKit
// Keys in the Keychain". The rules around it (what a missing item or each failure means, when a key is dead) are
// PlatformDeviceKeyStore's, tested on Linux with a fake.
#if (os(iOS) || os(macOS)) && canImport(CryptoKit) && canImport(Security) && canImport(LocalAuthentication)
    import CryptoKit
    import Foundation
    import LocalAuthentication
    import Security
    import VaultEnvelope

    /// The seed's iOS key (§3 step 3): a Secure Enclave P-256 key-agreement key usable only with the biometry enrolled
    /// when it was made (`[.privateKeyUsage, .biometryCurrentSet]`, `WhenUnlockedThisDeviceOnly`); its
    /// `dataRepresentation` is a Keychain generic-password item that is never synced and never leaves this device.
    ///
    /// The software fallback, a P-256 key kept in the item itself behind the same access control (`.biometryCurrentSet`,
    /// `WhenUnlockedThisDeviceOnly`), is used in the Simulator and on Macs without a Secure Enclave only:
    /// `SecureEnclave.isAvailable` is true on recent simulators, whose enclave is not the device's hardware.
    /// Every key this type hands out carries one `LAContext` with `localizedReason`, shared by all its uses: "If this
    /// key is specified with a context that has been previously authenticated, the operation will succeed without
    /// asking user for authentication" (https://developer.apple.com/documentation/security/ksecuseauthenticationcontext),
    /// so one engine operation prompts once, and the next operation's key asks again.
    /// Every query sets `kSecUseDataProtectionKeychain`: without it macOS stores the item in the file-based keychain,
    /// where `ThisDeviceOnly` and access control do not apply (TN3137,
    /// https://developer.apple.com/documentation/technotes/tn3137-on-mac-keychains); other platforms ignore it.
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

        /// Whether keys are made in the Secure Enclave: not in the Simulator, and not on a Mac without one.
        private static var usesSecureEnclave: Bool {
            #if targetEnvironment(simulator)
                // isAvailable is true on recent simulators (Apple DTS, developer.apple.com/forums/thread/737256), but
                // their keys are not bound to a device's hardware: the fallback says so honestly.
                return false
            #else
                return SecureEnclave.isAvailable
            #endif
        }

        /// Where a new key's item waits until `commitNewKey` makes it current.
        private var stagingAccount: String { account + ".new" }

        private func query(_ account: String) -> [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        /// A context for one key's uses; `interactionNotAllowed` when no prompt may be shown (a background task).
        private func context(allowingPrompts: Bool) -> SharedContext {
            let context = LAContext()
            context.localizedReason = localizedReason
            context.interactionNotAllowed = !allowingPrompts
            return SharedContext(context)
        }

        /// The item, read without prompting: the Secure Enclave key's `dataRepresentation`, or the fallback key's
        /// public key (its private key is read, with a prompt, when used). Finishes a commit cut short.
        ///
        /// - Throws: `PlatformKeyError` for a Keychain failure other than "not found" (`.unavailable` while locked).
        public func readKeyItem() throws(PlatformKeyError) -> Data? {
            if let item = try readItem(account) { return item }
            // A commit deleted the old item but did not rename the new one: finish it.
            guard try readItem(stagingAccount) != nil else { return nil }
            try commitNewKey()
            if let item = try readItem(account) { return item }
            return try readItem(stagingAccount)
        }

        private func readItem(_ account: String) throws(PlatformKeyError) -> Data? {
            var query = query(account)
            query[kSecReturnAttributes as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            query[kSecUseAuthenticationContext as String] = context(allowingPrompts: false).context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &found)
            guard status != errSecItemNotFound else { return nil }
            guard status == errSecSuccess, let attributes = found as? [String: Any],
                let generic = attributes[kSecAttrGeneric as String] as? Data,
                let kind = generic.first
            else { throw Self.error(status, "reading the key item") }
            guard kind == Self.secureEnclaveKind else { return generic }
            return Data([kind]) + (try readData(account, context: context(allowingPrompts: false)))
        }

        /// Creates the key (in the Secure Enclave when there is one) and stores its item beside the current one.
        ///
        /// - Throws: `PlatformKeyError` when the key or the item cannot be created; the current item is untouched.
        public func createKey(allowingPrompts: Bool) throws(PlatformKeyError) -> any P256KeyAgreementKey {
            discardNewKey()
            var item = query(stagingAccount)
            item[kSecAttrSynchronizable as String] = false
            let shared = context(allowingPrompts: allowingPrompts)
            if Self.usesSecureEnclave {
                let control = try Self.accessControl([.privateKeyUsage, .biometryCurrentSet])
                let key: SecureEnclave.P256.KeyAgreement.PrivateKey
                do {
                    key = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                        compactRepresentable: false, accessControl: control, authenticationContext: shared.context)
                } catch {
                    throw Self.error(error)
                }
                item[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
                item[kSecAttrGeneric as String] = Data([Self.secureEnclaveKind])
                item[kSecValueData as String] = key.dataRepresentation
                try Self.add(item)
                return SecureEnclaveAgreementKey(dataRepresentation: key.dataRepresentation, publicKey: key.publicKey, shared: shared)
            }
            let key = P256.KeyAgreement.PrivateKey()
            item[kSecAttrAccessControl as String] = try Self.accessControl([.biometryCurrentSet])
            item[kSecAttrGeneric as String] = Data([Self.fallbackKind]) + key.publicKey.rawRepresentation
            item[kSecValueData as String] = key.rawRepresentation
            try Self.add(item)
            return FallbackAgreementKey(keychain: self, publicKey: key.publicKey, shared: shared)
        }

        /// Makes the new item current: only now is the old one deleted, then the new one takes its account.
        ///
        /// - Throws: `PlatformKeyError` when the Keychain refuses the rename; `readKeyItem` finishes it later.
        public func commitNewKey() throws(PlatformKeyError) {
            guard try readItem(stagingAccount) != nil else { return }
            let deleted = SecItemDelete(query(account) as CFDictionary)
            guard deleted == errSecSuccess || deleted == errSecItemNotFound else { throw Self.error(deleted, "deleting the old key item") }
            let renamed = SecItemUpdate(query(stagingAccount) as CFDictionary, [kSecAttrAccount as String: account] as CFDictionary)
            guard renamed == errSecSuccess else { throw Self.error(renamed, "making the new key item current") }
        }

        /// Deletes a new item never made current.
        public func discardNewKey() {
            SecItemDelete(query(stagingAccount) as CFDictionary)
        }

        /// The key an item read by `readKeyItem` holds, with one context for all its uses.
        ///
        /// - Throws: `PlatformKeyError` `.invalidated` for an item that is not a key item; the Secure Enclave's own
        ///   refusals as it reports them (PlatformDeviceKeyStore decides from evidence whether the key died).
        public func key(fromItem item: Data, allowingPrompts: Bool) throws(PlatformKeyError) -> any P256KeyAgreementKey {
            guard let kind = item.first else { throw .invalidated("the key item is empty") }
            let body = Data(item.dropFirst())
            let shared = context(allowingPrompts: allowingPrompts)
            switch kind {
            case Self.secureEnclaveKind:
                // Loading the key prompts no one; its first use does.
                do {
                    let key = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                        dataRepresentation: body, authenticationContext: shared.context)
                    return SecureEnclaveAgreementKey(dataRepresentation: body, publicKey: key.publicKey, shared: shared)
                } catch {
                    throw Self.error(error)
                }
            case Self.fallbackKind:
                do {
                    return FallbackAgreementKey(
                        keychain: self, publicKey: try P256.KeyAgreement.PublicKey(rawRepresentation: body), shared: shared)
                } catch {
                    throw .invalidated("the fallback key item holds no public key")
                }
            default:
                throw .invalidated("unknown key item kind \(kind)")
            }
        }

        /// The enrolled biometry, read without prompting: `evaluatedPolicyDomainState` "is non-nil when the
        /// canEvaluatePolicy(_:error:) method succeeds for a biometric policy"
        /// (https://developer.apple.com/documentation/localauthentication/lacontext/evaluatedpolicydomainstate;
        /// deprecated from iOS 18 in favour of `LADomainState`, still answering).
        public func biometryState() -> PlatformBiometryState {
            let context = LAContext()
            context.interactionNotAllowed = true
            var error: NSError?
            guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else {
                switch error?.code {
                // No biometry or no passcode: a `.biometryCurrentSet` key made before can never be used again.
                case LAError.Code.biometryNotEnrolled.rawValue, LAError.Code.passcodeNotSet.rawValue: return .notEnrolled
                default: return .unknown("canEvaluatePolicy failed: \(error?.code ?? 0)")
                }
            }
            guard let state = context.evaluatedPolicyDomainState else { return .unknown("no domain state") }
            return .enrolled(state)
        }

        /// The item's secret, read through `shared` (prompting once, unless its context forbids it).
        fileprivate func readData(_ account: String, context shared: SharedContext) throws(PlatformKeyError) -> Data {
            var query = query(account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            // Never the default: without a context "a new context will be created, used once, and discarded", a prompt each time.
            query[kSecUseAuthenticationContext as String] = shared.context
            var found: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &found)
            guard status == errSecSuccess, let data = found as? Data else { throw Self.error(status, "reading the key") }
            return data
        }

        /// The fallback key's secret, from the current item or, after a commit cut short, the new one.
        fileprivate func readFallbackSecret(_ shared: SharedContext) throws(PlatformKeyError) -> Data {
            do { return try readData(account, context: shared) } catch .invalidated { return try readData(stagingAccount, context: shared) }
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

        /// What a Keychain status says, and no more: only a missing item is evidence that the key is gone.
        private static func error(_ status: OSStatus, _ doing: String) -> PlatformKeyError {
            switch status {
            case errSecItemNotFound: .invalidated("\(doing): the item is gone")
            // -128: "The user canceled the operation" (SecBase.h), also how a cancel can arrive as an OSStatus.
            case errSecUserCanceled: .canceled
            // -25308: "User interaction is not allowed" (SecBase.h): locked, or interactionNotAllowed and a prompt needed.
            case errSecInteractionNotAllowed: .unavailable("\(doing): the device is locked or no prompt can be shown (-25308)")
            // -25293 errSecAuthFailed: Apple documents it as failed authentication, not as a changed biometry set.
            default: .failed("\(doing): OSStatus \(status)")
            }
        }

        /// What a failure of the key in use (or of its creation) says, and no more.
        fileprivate static func error(_ error: any Error) -> PlatformKeyError {
            if let error = error as? LAError {
                switch error.code {
                case .userCancel, .appCancel, .systemCancel, .userFallback: return .canceled
                // "Displaying the required authentication user interface is forbidden" (LAError.notInteractive).
                case .notInteractive: return .unavailable("no prompt can be shown now")
                case .biometryLockout, .biometryNotAvailable: return .unavailable("biometry is not usable now")
                // A `.biometryCurrentSet` key needs a passcode: without one it never works again.
                case .passcodeNotSet: return .invalidated("no passcode is set on this device any more")
                // Judged by PlatformDeviceKeyStore from the domain state (nil once nothing is enrolled).
                case .biometryNotEnrolled: return .unavailable("no biometry is enrolled")
                default: return .failed("authentication failed: LAError \(error.code.rawValue)")
                }
            }
            let ns = error as NSError
            if ns.domain == NSOSStatusErrorDomain { return Self.error(OSStatus(ns.code), "using the key") }
            // Apple documents no error for "the biometry set changed": whatever else the Secure Enclave says is
            // reported as a failure, and PlatformDeviceKeyStore decides from the domain state whether the key died.
            return .failed("the Secure Enclave refused the key: \(error)")
        }
    }

    /// One `LAContext` shared by every use of one key. Not Sendable by itself; an engine operation, the only user of a
    /// key, runs one step at a time.
    private final class SharedContext: @unchecked Sendable {
        let context: LAContext

        init(_ context: LAContext) {
            self.context = context
        }
    }

    /// A Secure Enclave key, loaded with its shared context for every agreement: the first use prompts, later ones do not.
    private struct SecureEnclaveAgreementKey: P256KeyAgreementKey {
        let dataRepresentation: Data
        let publicKey: P256.KeyAgreement.PublicKey
        let shared: SharedContext

        func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
            do {
                let key = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                    dataRepresentation: dataRepresentation, authenticationContext: shared.context)
                return try key.sharedSecretFromKeyAgreement(with: publicKeyShare)
            } catch {
                throw SecureEnclaveKeychain.error(error)
            }
        }
    }

    /// The fallback's software key, read from its protected item through the shared context for every agreement.
    private struct FallbackAgreementKey: P256KeyAgreementKey {
        let keychain: SecureEnclaveKeychain
        let publicKey: P256.KeyAgreement.PublicKey
        let shared: SharedContext

        func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
            var raw = try keychain.readFallbackSecret(shared)
            defer { raw.resetBytes(in: raw.startIndex..<raw.endIndex) }
            let key: P256.KeyAgreement.PrivateKey
            do { key = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw) } catch {
                throw PlatformKeyError.invalidated("the fallback key item no longer holds a key")
            }
            return try key.sharedSecretFromKeyAgreement(with: publicKeyShare)
        }
    }
#endif
