import VaultCore
import VaultEnvelope

/// One way into the vault: an entry of `wrappedDeks`, as a device list shows it.
public struct DeviceEntry: Sendable, Equatable {
    /// The entry's `kek_id`.
    public let kekID: String
    /// Its label, e.g. a device name or "recovery code".
    public let label: String
    /// Its JWA algorithm name.
    public let algorithm: String
    /// When it was enrolled, if recorded.
    public let created: UTCTimestamp?
    /// Whether this device can open the vault through it.
    public let isThisDevice: Bool
    /// Whether it is a recovery path rather than a device key: a person-held secret (recovery code, passphrase) or
    /// the iCloud Keychain recovery key.
    public let isRecoveryPath: Bool
    /// Whether it is the iCloud Keychain recovery key's entry (`SyncedRecoveryKey`): its `kek_id` is the key this
    /// device holds in iCloud Keychain, or, on a device without it, its `A256KW` entry carries `SyncedRecoveryKey.label`.
    public var isSyncedRecoveryKey: Bool = false
}

/// Whether the vault has enough independent ways in to survive losing this device.
public struct KeyHealth: Sendable, Equatable {
    /// The entries this device can use.
    public let usableHere: [String]
    /// Device keys enrolled (this one included).
    public let deviceKeys: Int
    /// Recovery paths enrolled: recovery codes, passphrases and the iCloud Keychain recovery key.
    public let recoveryPaths: Int
    /// Whether the iCloud Keychain recovery key is enrolled (one of `recoveryPaths`).
    public var hasSyncedRecoveryKey: Bool = false
    /// A warning to show the user, when fewer than two independent ways in exist.
    public let warning: String?
}
