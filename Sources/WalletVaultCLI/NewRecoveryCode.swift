import Foundation
import VaultEnvelope
import WalletVault

/// A fresh recovery code for `init`, `revoke --new-recovery-code` and `recovery rotate`, and the one time it is shown.
struct NewRecoveryCode {
    /// The code.
    let code: RecoveryCode
    /// Its entry, to enroll.
    let path: (key: any KeyWrapping, label: String)

    /// Draws a code.
    ///
    /// - Throws: `CLIError` when its key cannot be derived.
    init() throws(CLIError) {
        code = RecoveryCode.generate()
        do { path = (try RecoveryCodeKEK(code: code), "Recovery code") } catch { throw CLIError.from(error) }
    }

    /// Prints the code once, with what it is for; it is never stored.
    func show(on terminal: any Terminal, replacing: Bool = false) {
        terminal.line("")
        terminal.line(
            replacing
                ? "New recovery code (the old code and any passphrase no longer open anything saved from now on; shown once, never stored):"
                : "Recovery code (shown once, never stored; write it down and keep it offline):")
        terminal.line("")
        terminal.line("    \(code.formatted)")
        terminal.line("")
        terminal.line("If every device is lost, `walletvault recover --code` opens the vault with it.")
    }
}
