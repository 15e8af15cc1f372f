/// `walletvault help` and `walletvault help COMMAND`.
enum HelpText {
    /// The overview, or one command's help.
    ///
    /// - Throws: `CLIError` `.usage` for an unknown command.
    static func text(for words: [String]) throws(CLIError) -> String {
        if words.first == "exit-codes" { return exitCodes }
        if words.isEmpty { return overview }
        let group = WalletVaultTool.subcommands(of: words[0])
        if words.count == 1, !group.isEmpty { return group.map(text(for:)).joined(separator: "\n") }
        return text(for: try WalletVaultTool.find(words).0)
    }

    /// One command's help.
    static func text(for spec: CommandSpec) -> String {
        let usage = spec.usage.map { "  walletvault [--home DIR] \($0)" }.joined(separator: "\n")
        let details = spec.details.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
        return "\(spec.summary)\n\nUsage:\n\(usage)\n\n\(details)\n"
    }

    static var overview: String {
        let width = WalletVaultTool.commands.map(\.name.count).max() ?? 0
        let list = WalletVaultTool.commands.map { "  " + $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.summary }
        return """
            walletvault: a terminal client for WalletVault, the end-to-end-encrypted wallet-vault sync service.

            Usage: walletvault [--home DIR] COMMAND [OPTIONS]

            Commands:
            \(list.joined(separator: "\n"))

            --home DIR  the profile (one device): default $WALLETVAULT_HOME, else $XDG_CONFIG_HOME/walletvault,
                        else ~/.config/walletvault; created with mode 0700.
            Secrets (recovery code, passphrase) are asked at the terminal without echo or read from a file, never
            taken from the command line.

            `walletvault help COMMAND` for a command's options; `walletvault help exit-codes` for exit codes.

            """
    }

    static var exitCodes: String {
        "Exit codes:\n"
            + ExitCode.allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0))\($0.meaning)" }
            .joined(separator: "\n") + "\n"
    }
}
