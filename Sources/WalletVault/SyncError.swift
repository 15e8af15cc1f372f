/// Why a vault operation on this device failed; the code decides what the app offers next.
public struct SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable {
        /// No vault on this device or the server yet: create one.
        case noVault
        /// This device holds no key that opens the vault: pair it or recover.
        case noAccess
        /// This device's key was in the vault it last synced and another device removed it (revocation): pair
        /// again or recover; `reason` names the writer's `hint` and `updatedUtc` as the blob states them.
        case removedFromVault
        /// The platform destroyed this device's key: recover with a code, a passphrase or pairing.
        case keyInvalidated
        /// The holder declined to unlock this device's key (a cancelled Face ID prompt): nothing changed, ask again
        /// later; not a reason to recover.
        case authenticationCanceled
        /// This device's key cannot be used now: the device is locked, the app is in the background, or no prompt can
        /// be shown (`errSecInteractionNotAllowed`, `LAError.notInteractive`, biometry locked out). Nothing changed;
        /// sync again in the foreground. Not a reason to recover.
        case notNow
        /// The server served an older blob than this device has seen.
        case rollbackDetected
        /// The server served another version under a counter this device already accepted or wrote: it keeps two
        /// versions apart (a fork) or dropped a member's write. Nothing was changed; compare vault fingerprints.
        case forkDetected
        /// The blob was altered (recipients, metadata or ciphertext); `reason` names what.
        case tampered
        /// The vault would exceed the server's size limit.
        case tooLarge
        /// The server refused or failed; `backupError` has the details.
        case server
        /// Both sides changed the same items and no conflict handler decided.
        case unresolvedConflict
        /// The device's own files could not be read or written.
        case localStorage
        /// The input (pairing request, recovery code) is malformed.
        case invalidInput
        /// This device reads the vault through an entry anyone could have written and has not confirmed the vault
        /// yet: get the confirmation code from the approving device and call `confirmPairing(code:)`.
        case confirmationRequired
        /// The confirmation code differs from the one the vault on the server gives: that vault was not written by
        /// the approving device (or the code was mistyped). Nothing was stored; type it again or pair again.
        case confirmationMismatch
    }

    /// What failed.
    public let code: Code
    /// A human-readable reason without secrets.
    public let reason: String
    /// The server's answer, for `.server`.
    public let backupError: BackupError?

    /// Creates an error.
    public init(_ code: Code, _ reason: String, backupError: BackupError? = nil) {
        self.code = code
        self.reason = reason
        self.backupError = backupError
    }

    public var description: String {
        "\(code.rawValue): \(reason)" + (backupError.map { " (\($0))" } ?? "")
    }
}
