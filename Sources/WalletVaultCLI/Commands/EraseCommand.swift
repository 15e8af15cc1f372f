import Foundation
import WalletVault

/// `walletvault erase`: erases the account's vault and its history from the server, then this device's copies.
enum EraseCommand {
    static let spec = CommandSpec(
        name: "erase",
        usage: ["erase [--yes]"],
        summary: "Erase the account's vault and every kept version from the server, and this device's copies.",
        details: """
            The right to erasure: the server deletes the vault and its history; this device deletes its working and
            synced copies (its key and profile stay, so `init` can start a new vault). Other devices find no vault at
            their next sync. It cannot be undone. At a terminal it asks you to type the account's subject (`sub`) to
            confirm; elsewhere pass --yes.
            Example: walletvault erase
            """,
        arguments: .init(flags: ["--yes"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "erase")
        let session = try context.session()
        let terminal = context.terminal
        if !context.arguments.has("--yes") {
            guard terminal.isInteractive else {
                throw CLIError(.usage, "erase deletes the vault for good and needs a confirmation: run it at a terminal, or pass --yes")
            }
            let subject = try await session.accountSubject()
            let typed = terminal.readLine(
                prompt: "This erases the vault of account \"\(subject)\" and all its versions. "
                    + "Type the account name to confirm: ")
            guard typed?.trimmingCharacters(in: .whitespaces) == subject else {
                throw CLIError(.usage, "not confirmed; nothing was erased")
            }
        }
        try await session.run("Erasing") { engine async throws(SyncError) in try await engine.eraseAccount() }
        terminal.line("Erased the vault and its history from the server and this device's copies of it.")
    }
}
