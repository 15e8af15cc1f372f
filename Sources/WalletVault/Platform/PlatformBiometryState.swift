import Foundation

/// The enrolled biometry as the platform reports it without prompting: on Apple platforms
/// `LAContext.evaluatedPolicyDomainState` after `canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics)`.
/// `PlatformDeviceKeyStore` records it when it creates a key and compares it when the key fails: Apple documents no
/// error code for "the biometry set changed", only that this value changes with it.
public enum PlatformBiometryState: Sendable, Equatable {
    /// Biometry is enrolled; the opaque value changes whenever a face or finger is added or removed.
    case enrolled(Data)
    /// No biometry is enrolled (or no passcode is set): a `.biometryCurrentSet` key made before can never work again.
    case notEnrolled
    /// The state cannot be read now (biometry locked out or not available): no evidence either way.
    case unknown(String)
}
