import Foundation
import Synchronization
import VaultCrypto
import VaultEnvelope
import WalletVault

/// A stand-in for the Secure Enclave and Keychain: a software key behind the same protocol, failing the way Apple
/// documents (each case cites the page it plays):
///
/// - A locked device: items readable only `WhenUnlocked` answer `errSecInteractionNotAllowed` (-25308, "interaction
///   with the user is required", Security `SecBase.h`), which the Apple code reports as `.unavailable`.
/// - No UI (the app is in the background, or the context says `interactionNotAllowed`): a key that still needs its
///   holder fails with `LAError.notInteractive` ("displaying the required authentication user interface is
///   forbidden", https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code/notinteractive),
///   reported as `.unavailable`.
/// - One prompt per context: "If this key is specified with a context that has been previously authenticated, the
///   operation will succeed without asking user for authentication" (kSecUseAuthenticationContext,
///   https://developer.apple.com/documentation/security/ksecuseauthenticationcontext). Each key instance this fake
///   hands out is one context: its first use prompts (counted in `prompts`), later uses do not.
/// - The biometry set: `evaluatedPolicyDomainState` is non-nil only while `canEvaluatePolicy` succeeds for a biometric
///   policy, and changes when the enrolled set changes
///   (https://developer.apple.com/documentation/localauthentication/lacontext/evaluatedpolicydomainstate). Apple
///   documents no error code for "biometry changed": a `.biometryCurrentSet` key then fails with whatever the Secure
///   Enclave says, which the Apple code reports as `.failed` (set with `failInUse`).
final class FakeKeychain: PlatformKeychain {
    private struct State {
        var item: Data?
        /// An item `createKey` stored that `commitNewKey` has not made current yet.
        var pending: Data?
        var failureInUse: PlatformKeyError?
        var failureOnCreate: PlatformKeyError?
        /// Keys (their items) that died in place: each fails in use, keys created later work.
        var deadKeys: Set<Data> = []
        /// What `evaluatedPolicyDomainState` reads now; nil: no biometry enrolled.
        var biometry: Data? = Data("enrolled-faces-1".utf8)
        var locked = false
        var background = false
        var prompts = 0
    }

    private let state = Mutex(State())

    /// The Apple account this phone is signed in to: its synchronizable items, shared with every other phone of the
    /// same account; this keychain's own key item stays on this phone.
    let account: FakeAppleAccount

    /// A phone signed in to `account` (a new account of its own when nil).
    init(account: FakeAppleAccount? = nil) {
        self.account = account ?? FakeAppleAccount()
    }

    /// What using the key throws from now on (nil: it works), as the Apple code reports the Secure Enclave's answer.
    func failInUse(with error: PlatformKeyError?) { state.withLock { $0.failureInUse = error } }

    /// What creating a key throws from now on (nil: it works).
    func failOnCreate(with error: PlatformKeyError?) { state.withLock { $0.failureOnCreate = error } }

    /// Plays the app restored onto another phone: the item does not migrate.
    func dropItem() { state.withLock { $0.item = nil } }

    /// Plays the current key dying in place, as a `.biometryCurrentSet` key does when a face or finger is added or
    /// removed: its item stays, the domain state changes, and that key (only it: a key created later works) fails in
    /// use with what the Secure Enclave says, which Apple documents no code for (`.failed`).
    func invalidateCurrentKey() {
        state.withLock { state in
            if let item = state.item { state.deadKeys.insert(item) }
            state.biometry = Data(UUID().uuidString.utf8)
        }
    }

    /// Plays a face or finger added or removed: the domain state changes.
    func changeBiometry() { state.withLock { $0.biometry = Data(UUID().uuidString.utf8) } }

    /// Plays every face or finger removed: `canEvaluatePolicy` fails with `.biometryNotEnrolled`, the state is nil.
    func removeBiometry() { state.withLock { $0.biometry = nil } }

    /// Plays the device locked (true) or unlocked.
    func setLocked(_ locked: Bool) { state.withLock { $0.locked = locked } }

    /// Plays the app in the background, where no prompt can be shown.
    func setInBackground(_ background: Bool) { state.withLock { $0.background = background } }

    /// The Face ID prompts shown so far.
    var prompts: Int { state.withLock { $0.prompts } }

    /// The stored item, as a test inspects it.
    var storedItem: Data? { state.withLock { $0.item } }

    func readKeyItem() throws(PlatformKeyError) -> Data? {
        let (item, locked) = state.withLock { ($0.item, $0.locked) }
        if locked, item != nil { throw .unavailable("reading the key item: OSStatus -25308 (errSecInteractionNotAllowed)") }
        return item
    }

    func createKey(allowingPrompts: Bool) throws(PlatformKeyError) -> any P256KeyAgreementKey {
        if let failure = state.withLock({ $0.failureOnCreate }) { throw failure }
        let key: P256.KeyAgreement.PrivateKey
        do { key = try P256.KeyAgreement.PrivateKey() } catch { throw .failed("keygen") }
        state.withLock { $0.pending = key.rawRepresentation }
        return FailingKey(key: key, keychain: self, context: Context(allowsPrompts: allowingPrompts))
    }

    func commitNewKey() throws(PlatformKeyError) {
        state.withLock { state in
            guard let pending = state.pending else { return }
            (state.item, state.pending) = (pending, nil)
        }
    }

    func discardNewKey() { state.withLock { $0.pending = nil } }

    func key(fromItem item: Data, allowingPrompts: Bool) throws(PlatformKeyError) -> any P256KeyAgreementKey {
        do {
            return FailingKey(
                key: try P256.KeyAgreement.PrivateKey(rawRepresentation: item), keychain: self,
                context: Context(allowsPrompts: allowingPrompts))
        } catch {
            throw .invalidated("not a key")
        }
    }

    func biometryState() -> PlatformBiometryState {
        state.withLock { $0.biometry.map { .enrolled($0) } ?? .notEnrolled }
    }

    /// One use of a key through `context`: throws as the platform would, counts the prompt the first use shows.
    fileprivate func use(_ context: Context, of key: P256.KeyAgreement.PrivateKey) throws(PlatformKeyError) {
        let failure: PlatformKeyError? = state.withLock { state in
            if let failure = state.failureInUse { return failure }
            if state.deadKeys.contains(key.rawRepresentation) {
                return .failed("the Secure Enclave refused the key: CryptoKitError.underlyingCoreCryptoError")
            }
            if state.locked { return .unavailable("OSStatus -25308 (errSecInteractionNotAllowed): the device is locked") }
            guard !context.authenticated.withLock({ $0 }) else { return nil }
            if state.background || !context.allowsPrompts { return .unavailable("LAError.notInteractive: no UI can be shown") }
            state.prompts += 1
            context.authenticated.withLock { $0 = true }
            return nil
        }
        if let failure { throw failure }
    }

    /// One `LAContext`: authenticated by its first successful use.
    fileprivate final class Context: Sendable {
        let allowsPrompts: Bool
        let authenticated = Mutex(false)

        init(allowsPrompts: Bool) {
            self.allowsPrompts = allowsPrompts
        }
    }

    /// A software key that uses the keychain's rules, as a Secure Enclave key with its own context does.
    private struct FailingKey: P256KeyAgreementKey {
        let key: P256.KeyAgreement.PrivateKey
        let keychain: FakeKeychain
        let context: Context

        var publicKey: P256.KeyAgreement.PublicKey { key.publicKey }

        func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
            try keychain.use(context, of: key)
            return try key.sharedSecretFromKeyAgreement(with: publicKeyShare)
        }
    }
}
