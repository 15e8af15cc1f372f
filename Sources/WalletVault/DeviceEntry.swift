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
    /// Whether it is a person-held secret (recovery code, passphrase) rather than a device key.
    public let isRecoveryPath: Bool
}

/// Whether the vault has enough independent ways in to survive losing this device.
public struct KeyHealth: Sendable, Equatable {
    /// The entries this device can use.
    public let usableHere: [String]
    /// Device keys enrolled (this one included).
    public let deviceKeys: Int
    /// Recovery codes and passphrases enrolled.
    public let recoveryPaths: Int
    /// A warning to show the user, when fewer than two independent ways in exist.
    public let warning: String?
}
