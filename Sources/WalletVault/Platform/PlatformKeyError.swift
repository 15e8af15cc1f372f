import VaultEnvelope

/// How a platform key store failed, in the terms the SDK acts on; the Apple Keychain and Secure Enclave code maps
/// its `OSStatus` and `LAError` values to these, and tests' fakes throw them directly.
public enum PlatformKeyError: Error, Sendable, Equatable {
    /// The key is gone or can never work again: biometry enrollment changed (`.biometryCurrentSet`), the app was
    /// restored onto another phone (Secure Enclave keys and `ThisDeviceOnly` items do not migrate). Recover.
    case invalidated(String)
    /// The holder cancelled the prompt. Nothing changed; not a reason to recover.
    case canceled
    /// The key cannot be used now (the device is locked, biometry is locked out, no passcode is set).
    case unavailable(String)
    /// Anything else, with the platform's code.
    case failed(String)

    /// The same failure as the envelope layer reports it from a key in use.
    var envelopeError: VaultEnvelopeError {
        switch self {
        case .invalidated(let reason): VaultEnvelopeError(.invalidated, "this device's key no longer works: \(reason)")
        case .canceled: VaultEnvelopeError(.userCanceled, "the prompt to unlock this device's key was cancelled")
        case .unavailable(let reason): VaultEnvelopeError(.keyStorage, "this device's key cannot be used now: \(reason)")
        case .failed(let reason): VaultEnvelopeError(.keyStorage, "this device's key failed: \(reason)")
        }
    }

    /// The same failure as the sync engine reports it.
    var syncError: SyncError {
        switch self {
        case .invalidated(let reason): SyncError(.keyInvalidated, "this device's key no longer works: \(reason)")
        case .canceled: SyncError(.authenticationCanceled, "the prompt to unlock this device's key was cancelled")
        case .unavailable(let reason): SyncError(.localStorage, "this device's key cannot be used now: \(reason)")
        case .failed(let reason): SyncError(.localStorage, "this device's key failed: \(reason)")
        }
    }
}
