import VaultEnvelope

/// How a platform key store failed, as the platform said it: the Apple Keychain and Secure Enclave code maps its
/// `OSStatus` and `LAError` values to these, and tests' fakes throw them directly. Only `.invalidated` says the key
/// is dead, and only on evidence (the item is gone, no passcode any more); `PlatformDeviceKeyStore` turns the others
/// into `.invalidated` only when the biometry set recorded at creation changed or is gone.
public enum PlatformKeyError: Error, Sendable, Equatable {
    /// The key is gone or can never work again: its item is missing (the app was restored onto another phone, where
    /// Secure Enclave keys and `ThisDeviceOnly` items do not exist), or no passcode is set any more. Recover.
    case invalidated(String)
    /// The holder cancelled the prompt (an `LAError` cancel, or `errSecUserCanceled`, -128). Nothing changed.
    case canceled
    /// The key cannot be used now: the device is locked or no UI can be shown (`errSecInteractionNotAllowed`,
    /// `LAError.notInteractive`), biometry is locked out or not available. Nothing changed; try again later.
    case unavailable(String)
    /// Anything else, with the platform's code. The key is left alone.
    case failed(String)

    /// The same failure as the envelope layer reports it from a key in use.
    var envelopeError: VaultEnvelopeError {
        switch self {
        case .invalidated(let reason): VaultEnvelopeError(.invalidated, "this device's key no longer works: \(reason)")
        case .canceled: VaultEnvelopeError(.userCanceled, "the prompt to unlock this device's key was cancelled")
        // The envelope layer has no "not now" code: `PlatformDeviceKeyStore.syncError(for:)` gives it back its own.
        case .unavailable(let reason): VaultEnvelopeError(.keyStorage, "this device's key cannot be used now: \(reason)")
        case .failed(let reason): VaultEnvelopeError(.keyStorage, "this device's key failed (it is left as it is): \(reason)")
        }
    }

    /// The same failure as the sync engine reports it.
    var syncError: SyncError {
        switch self {
        case .invalidated(let reason): SyncError(.keyInvalidated, "this device's key no longer works: \(reason)")
        case .canceled: SyncError(.authenticationCanceled, "the prompt to unlock this device's key was cancelled")
        case .unavailable(let reason): SyncError(.notNow, "this device's key cannot be used now: \(reason)")
        case .failed(let reason): SyncError(.localStorage, "this device's key failed (it is left as it is): \(reason)")
        }
    }
}
