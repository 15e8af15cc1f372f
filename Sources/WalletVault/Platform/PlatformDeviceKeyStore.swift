import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope

/// This device's key in the platform's key store (the Secure Enclave and Keychain on iOS), with the seed's
/// self-ECDH entry, and the rules for when it stops working, the same on every platform.
///
/// - No item, and no key was ever created here: no key yet (create one, pair, or recover).
/// - No item, but this profile recorded a key: the key is gone (the app was restored onto another phone, where
///   neither Secure Enclave keys nor `ThisDeviceOnly` items exist): `.keyInvalidated`, and the §7 recovery runs.
/// - The key fails in use: `.keyInvalidated` only on evidence, because Apple documents no error code for "biometry
///   changed": the item is gone, the platform says so itself (no passcode any more), or the biometry state recorded
///   when the key was made (`LAContext.evaluatedPolicyDomainState`, which "lets you detect if a change happens",
///   https://developer.apple.com/documentation/localauthentication/lacontext/evaluatedpolicydomainstate) changed or
///   is gone. A cancelled prompt is `.authenticationCanceled`; a locked device or no UI is `.notNow`; anything else
///   is `.localStorage`. None of those touches the key or offers recovery.
/// - One operation of the engine (a sync, a pairing request or confirmation, a recovery) uses one key and so one
///   authentication: at most one Face ID prompt, none when the key is not needed. The next operation authenticates
///   anew.
/// - Inside `withoutPrompts` (a background task) no prompt is ever attempted: what needs the key ends with `.notNow`,
///   what does not (an up-to-date check, a 304) succeeds, even while the device is locked.
public struct PlatformDeviceKeyStore: DeviceKeyStore {
    private let keychain: any PlatformKeychain
    private let profile: LocalVaultStore
    private let session = Session()

    /// Whether keys handed out now may prompt; false inside `withoutPrompts`.
    @TaskLocal static var promptsAllowed = true

    /// Keeps the key in `keychain` and, in `profile` (not secret), the `kek_id` of the last key created and the
    /// biometry state it was created under, so a key that vanished or died is told apart from one never created.
    public init(keychain: any PlatformKeychain, profile: LocalVaultStore) {
        self.keychain = keychain
        self.profile = profile
    }

    /// Runs `body` (a background task's sync) with no prompt allowed: an operation that needs this device's key
    /// ends with `SyncError` `.notNow` and changes nothing; one that does not need it runs as usual.
    ///
    /// - Throws: what `body` throws.
    public static func withoutPrompts<T>(_ body: () async throws -> T) async rethrows -> T {
        try await $promptsAllowed.withValue(false, operation: body)
    }

    /// The key, nil when none was ever created here.
    ///
    /// - Throws: `SyncError` `.keyInvalidated` when the recorded key is gone or died, `.notNow`,
    ///   `.authenticationCanceled`, `.localStorage`, as the type's rules say.
    public func currentDeviceKey() throws(SyncError) -> (any DeviceKey)? {
        if let key = session.key { return key }
        let item: Data?
        do { item = try keychain.readKeyItem() } catch {
            // Locked: a `WhenUnlocked` item cannot be read, but the key recorded here is still this device's. Its public
            // half is its self-ECDH kek_id, so checks that need no key (a 304) go on; a use reports "not now".
            if case .unavailable = error, let key = lockedKey(error) { return key }
            throw judge(error).syncError
        }
        guard let item else {
            guard lastDeviceKeyID() == nil else {
                throw SyncError(.keyInvalidated, "this device's key is gone (restored onto another device, or removed)")
            }
            return nil
        }
        let key: any P256KeyAgreementKey
        do { key = try keychain.key(fromItem: item, allowingPrompts: Self.promptsAllowed) } catch { throw judge(error).syncError }
        return session.keep(SelfECDHDeviceKey(PlatformAgreementKey(key, store: self)))
    }

    /// Creates a key and records its `kek_id` and biometry state; the old key's item is deleted only once the new
    /// one is stored.
    ///
    /// - Throws: `SyncError` as `PlatformKeyError.syncError` says, `.localStorage` when the id cannot be recorded.
    public func newDeviceKey() throws(SyncError) -> any DeviceKey {
        session.forget()
        let key: any P256KeyAgreementKey
        do { key = try keychain.createKey(allowingPrompts: Self.promptsAllowed) } catch { throw error.syncError }
        // Read after creating, as Apple's flow has it: canEvaluatePolicy, then evaluatedPolicyDomainState.
        let biometry: Data?
        if case .enrolled(let state) = keychain.biometryState() { biometry = state } else { biometry = nil }
        let device = SelfECDHDeviceKey(PlatformAgreementKey(key, store: self))
        do throws(SyncError) {
            try profile.rememberDeviceKeyID(device.kekID)
            try profile.rememberDeviceKeyBiometryState(biometry)
        } catch {
            keychain.discardNewKey()
            throw error
        }
        do { try keychain.commitNewKey() } catch { throw error.syncError }
        return session.keep(device)
    }

    /// The `kek_id` of the last key created here.
    public func lastDeviceKeyID() -> String? { profile.deviceKeyID() }

    /// Keys handed out from now on are kept for the operation: one authentication.
    public func operationBegan() { session.begin() }

    /// The operation's key is dropped: the next operation authenticates anew.
    public func operationEnded() { session.end() }

    /// `.notNow` (and the other judged failures) for an error this store's key threw in use.
    public func syncError(for error: VaultEnvelopeError) -> SyncError? { session.failure(for: error) }

    /// A failure of the key, as the evidence decides it.
    func judge(_ error: PlatformKeyError) -> PlatformKeyError {
        switch error {
        case .invalidated, .canceled: return error
        case .unavailable, .failed: return deathEvidence().map { .invalidated($0) } ?? error
        }
    }

    /// Records what a key in use threw, for `syncError(for:)`.
    func reportInUse(_ error: PlatformKeyError) -> VaultEnvelopeError {
        let envelope = error.envelopeError
        session.record(envelope, as: error.syncError)
        return envelope
    }

    /// Why the recorded key is dead, when something shows it is.
    private func deathEvidence() -> String? {
        do {
            if try keychain.readKeyItem() == nil, lastDeviceKeyID() != nil { return "the key item is gone" }
        } catch {
            // Unreadable now (locked) is no evidence either way.
        }
        guard let recorded = profile.deviceKeyBiometryState() else { return nil }
        switch keychain.biometryState() {
        case .enrolled(let now): return now == recorded ? nil : "the enrolled biometry changed since the key was made"
        case .notEnrolled: return "no biometry is enrolled any more"
        case .unknown: return nil
        }
    }

    /// The recorded key, usable for its public half only, while the platform cannot read its item.
    private func lockedKey(_ error: PlatformKeyError) -> (any DeviceKey)? {
        guard let kekID = lastDeviceKeyID(), let raw = Base64URL.decode(kekID),
            let publicKey = try? P256.KeyAgreement.PublicKey(rawRepresentation: raw)
        else { return nil }
        return SelfECDHDeviceKey(PlatformAgreementKey(UnreadableKey(publicKey: publicKey, error: error), store: self))
    }

    /// The key and failures of the running operation.
    private final class Session: @unchecked Sendable {
        private let lock = NSLock()
        private var running = false
        private var current: (any DeviceKey)?
        private var failures: [(reason: String, error: SyncError)] = []

        var key: (any DeviceKey)? { lock.withLock { current } }

        func begin() { lock.withLock { (running, current, failures) = (true, nil, []) } }
        func end() { lock.withLock { (running, current, failures) = (false, nil, []) } }
        func forget() { lock.withLock { current = nil } }

        func keep(_ key: any DeviceKey) -> any DeviceKey {
            lock.withLock { if running { current = key } }
            return key
        }

        func record(_ envelope: VaultEnvelopeError, as error: SyncError) {
            lock.withLock { failures = Array((failures + [(envelope.reason, error)]).suffix(8)) }
        }

        func failure(for error: VaultEnvelopeError) -> SyncError? {
            lock.withLock { failures.last { $0.reason == error.reason }?.error }
        }
    }
}

/// A platform key whose failures in use are judged by its store and reach the envelope layer as `.invalidated`,
/// `.userCanceled` or `.keyStorage`.
struct PlatformAgreementKey: P256KeyAgreementKey {
    let base: any P256KeyAgreementKey
    let store: PlatformDeviceKeyStore

    init(_ base: any P256KeyAgreementKey, store: PlatformDeviceKeyStore) {
        self.base = base
        self.store = store
    }

    var publicKey: P256.KeyAgreement.PublicKey { base.publicKey }

    func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
        do { return try base.sharedSecretFromKeyAgreement(with: publicKeyShare) } catch let error as PlatformKeyError {
            throw store.reportInUse(store.judge(error))
        }
    }
}

/// The recorded key's public half while its item cannot be read (the device is locked): every use fails as the read did.
private struct UnreadableKey: P256KeyAgreementKey {
    let publicKey: P256.KeyAgreement.PublicKey
    let error: PlatformKeyError

    func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret { throw error }
}
