import Foundation
import WalletVault

/// A profile directory (`--home DIR`): `profile.json` and the SDK's device files under `device/`, mode 0700.
///
/// One directory is one device; two directories on one machine play two devices.
public struct ProfileHome: Sendable {
    /// The directory.
    public let directory: URL

    /// Uses `directory` as the profile directory.
    public init(directory: URL) {
        self.directory = directory
    }

    /// `--home`, else `$WALLETVAULT_HOME`, else `$XDG_CONFIG_HOME/walletvault`, else `~/.config/walletvault`.
    public static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> ProfileHome {
        if let option { return ProfileHome(directory: URL(fileURLWithPath: option)) }
        if let home = environment["WALLETVAULT_HOME"], !home.isEmpty { return ProfileHome(directory: URL(fileURLWithPath: home)) }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            return ProfileHome(directory: URL(fileURLWithPath: config).appendingPathComponent("walletvault"))
        }
        let user = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return ProfileHome(directory: user.appendingPathComponent(".config/walletvault"))
    }

    /// `profile.json`.
    var profileURL: URL { directory.appendingPathComponent("profile.json") }
    /// The SDK's `LocalVaultStore` directory.
    public var deviceDirectory: URL { directory.appendingPathComponent("device") }
    /// The device key file, which `demo` overwrites to play the platform invalidating the key.
    public var deviceKeyFile: URL { deviceDirectory.appendingPathComponent("device-key.pem") }

    /// Whether this profile holds a vault (a working copy) on this device.
    var holdsVault: Bool {
        FileManager.default.fileExists(atPath: deviceDirectory.appendingPathComponent("working.sealed").path)
    }

    /// Creates the directory with mode 0700, and tightens an existing one to 0700: it holds the device key.
    ///
    /// - Throws: `CLIError` `.localStorage`.
    func prepare() throws(CLIError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        } catch {
            throw CLIError(.localStorage, "cannot create the profile directory \(directory.path): choose another with --home")
        }
    }

    /// The saved profile.
    ///
    /// - Throws: `CLIError` `.notAuthorized` when there is none, `.localStorage` when it cannot be read.
    public func loadProfile() throws(CLIError) -> Profile {
        guard let data = try? Data(contentsOf: profileURL) else {
            throw CLIError(.notAuthorized, "no profile in \(directory.path): run `walletvault login` first")
        }
        do { return try JSONDecoder().decode(Profile.self, from: data) } catch {
            throw CLIError(.localStorage, "\(profileURL.path) is not a walletvault profile: run `walletvault login` again")
        }
    }

    /// Saves the profile (mode 0600, atomically).
    ///
    /// - Throws: `CLIError` `.localStorage`.
    func save(_ profile: Profile) throws(CLIError) {
        try prepare()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(profile) else { throw CLIError(.localStorage, "cannot encode the profile") }
        try FileWriter.writeAtomically(data, to: profileURL)
    }

    /// The SDK store for this device.
    ///
    /// - Throws: `CLIError` `.localStorage`.
    func store() throws(CLIError) -> LocalVaultStore {
        try prepare()
        do { return try LocalVaultStore(directory: deviceDirectory) } catch { throw CLIError.from(error) }
    }
}
