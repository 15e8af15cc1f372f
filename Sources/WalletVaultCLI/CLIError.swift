import Foundation
import VaultEnvelope
import WalletVault

/// A failure of a command: one line saying what happened and what to do, and the exit code.
///
/// Messages never contain tokens, keys, recovery codes or vault bytes.
public struct CLIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The exit code the process ends with.
    public let exitCode: ExitCode
    /// What happened and what to do, one line.
    public let message: String

    /// Creates an error.
    public init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    public var description: String { message }

    /// A usage error, `<what happened>: run `walletvault help [COMMAND]``, as every message is `<what>: <what to do>`.
    static func usage(_ message: String, command: String? = nil) -> CLIError {
        CLIError(
            .usage,
            "\(message): run `walletvault help\(command.map { " " + $0 } ?? "")` for "
                + (command == nil ? "the commands" : "its usage"))
    }

    /// Translates an SDK error into what the user should do next.
    static func from(_ error: SyncError) -> CLIError {
        switch error.code {
        case .noVault:
            return CLIError(
                .vaultState,
                "no vault yet (\(error.reason)): run `walletvault init` on the first device, "
                    + "or `walletvault pair request` on another")
        case .noAccess:
            return CLIError(
                .noAccess,
                "this device cannot open the vault (\(error.reason)): run `walletvault pair request` here "
                    + "and approve it on a device that has the vault, or `walletvault recover --code`")
        case .removedFromVault:
            return CLIError(
                .noAccess,
                "\(error.reason): to use this device again, approve a new `walletvault pair request` "
                    + "from a device in the vault, or `walletvault recover --code`")
        case .authenticationCanceled:
            return CLIError(.noAccess, "this device's key was not unlocked (\(error.reason)): run the command again and confirm")
        case .notNow:
            return CLIError(
                .noAccess, "this device's key cannot be used now (\(error.reason)): unlock the device and run the command again")
        case .keyInvalidated:
            return CLIError(
                .noAccess,
                "this device's key was invalidated (\(error.reason)): run `walletvault recover --code` "
                    + "or `--passphrase`, or pair again")
        case .rollbackDetected:
            return CLIError(
                .integrity,
                "the server served an older vault than this device has seen (\(error.reason)); "
                    + "nothing was changed: report it to the server's operator")
        case .forkDetected:
            return CLIError(
                .integrity,
                "the server served a version of the vault that is not in the history this device already accepted "
                    + "(\(error.reason)); nothing was changed: compare `walletvault devices` fingerprints with your "
                    + "other devices and report it to the server's operator")
        case .tampered:
            return CLIError(
                .integrity,
                "the vault on the server was altered (\(error.reason)); nothing was changed: "
                    + "report it to the server's operator")
        case .tooLarge:
            return CLIError(.usage, "the vault would be too large for the server (\(error.reason)): remove items and try again")
        case .unresolvedConflict:
            return CLIError(
                .conflict,
                "\(error.reason); your edits are kept here: run `walletvault sync` at a terminal to "
                    + "choose, or `walletvault sync --keep local|cloud|merge`")
        case .localStorage:
            return CLIError(
                .localStorage,
                "this device's vault files cannot be used (\(error.reason)): check the profile "
                    + "directory's permissions and free space")
        case .invalidInput:
            return CLIError(.usage, "\(error.reason)")
        case .confirmationRequired:
            return CLIError(
                .noAccess,
                "this device has not confirmed the vault yet (\(error.reason)): run "
                    + "`walletvault pair confirm CODE` with the code the approving device showed")
        case .confirmationMismatch:
            return CLIError(
                .integrity,
                "\(error.reason): type the code again exactly as the approving device shows it; if it "
                    + "still differs, the vault on the server was not written by that device: pair again")
        case .server:
            guard let backup = error.backupError else { return CLIError(.server, "\(error.reason): try again later") }
            return from(backup, context: error.reason)
        }
    }

    /// Translates a backup-service error.
    static func from(_ error: BackupError, context: String) -> CLIError {
        switch error {
        case .unauthorized:
            return CLIError(.notAuthorized, "\(context): the server refused the login: run `walletvault login` again")
        case .rateLimited(let seconds):
            // A sync's edits wait on this device; a revoke, an approval or a restore is not made later by itself.
            return CLIError(
                .rateLimited,
                "\(context): too many saves this hour; edits are kept here, and this command must be run again in \(seconds) s")
        case .notFound:
            return CLIError(.vaultState, "\(context): no vault is stored for this account: run `walletvault init`")
        case .conflict:
            return CLIError(.server, "\(context): another device saved at the same moment: run the command again")
        case .blobTooLarge:
            return CLIError(.usage, "\(context): the vault is larger than the server accepts: remove items and try again")
        case .writerRefused:
            return CLIError(
                .noAccess,
                "\(context): the server takes saves and erasures of this vault only from its current members: "
                    + "pair this device again or recover (`walletvault recover`)")
        case .invalidJSON, .invalidVaultShape:
            return CLIError(.server, "\(context): the server refused the vault's shape (\(error)): report it as a bug")
        case .rejected(let status, let code):
            return CLIError(.server, "\(context): the server answered \(status) \(code): check the server URL (`walletvault status`)")
        case .serverUnavailable(let status):
            return CLIError(.server, "\(context): the server failed (HTTP \(status)): try again later")
        case .transport(let reason):
            return CLIError(
                .server,
                "\(context): the server cannot be reached (\(reason)): check it is running and the URL "
                    + "in `walletvault status`")
        }
    }

    /// Translates an envelope error met outside the engine (recovery codes, passphrases).
    static func from(_ error: VaultEnvelopeError) -> CLIError {
        switch error.code {
        case .invalidRecoveryCode:
            return CLIError(.usage, "that is not a valid recovery code (\(error.reason)): check the groups named and type it again")
        case .noMatchingKey, .unwrapFailed:
            return CLIError(.noAccess, "the secret does not open this vault (\(error.reason)): check it and try again")
        case .weakParameters:
            return CLIError(.integrity, "the vault's passphrase entry has unsafe costs (\(error.reason)); nothing was changed")
        default:
            return CLIError(.integrity, "the vault cannot be read (\(error.code.rawValue): \(error.reason))")
        }
    }
}
