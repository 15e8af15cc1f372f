import Foundation

/// The `walletvault` command line: global options, dispatch to commands, help, and errors as one line and an exit code.
public enum WalletVaultTool {
    /// Every command, in the order help lists them.
    static let commands: [CommandSpec] = [
        LoginCommand.spec, InitCommand.spec, PushCommand.spec, PullCommand.spec, StatusCommand.spec, SyncCommand.spec,
        WatchCommand.spec,
        DevicesCommand.spec, PairCommand.request, PairCommand.approve, PairCommand.confirm, RecoverCommand.spec, RevokeCommand.spec,
        RecoveryRotateCommand.spec,
        HistoryCommand.spec, RestoreCommand.spec, EraseCommand.spec, InspectCommand.spec, DemoCommand.spec,
    ]

    /// Runs the command line `arguments` (without the program name) and returns the exit code.
    public static func run(_ arguments: [String], terminal: any Terminal = SystemTerminal()) async -> Int32 {
        do {
            try await dispatch(arguments, terminal: terminal)
            return ExitCode.ok.rawValue
        } catch {
            terminal.note("walletvault: \(error.message)")
            return error.exitCode.rawValue
        }
    }

    private static func dispatch(_ arguments: [String], terminal: any Terminal) async throws(CLIError) {
        var rest: [String] = []
        var homeOption: String?
        var wantsHelp = false
        var index = 0
        var optionsEnded = false
        // Global options may stand before or after the command, as long as they precede `--`.
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded {
                rest.append(argument)
            } else if argument == "--" {
                optionsEnded = true
                rest.append(argument)
            } else if argument == "--home" {
                guard index < arguments.count else { throw CLIError.usage("--home needs a directory") }
                homeOption = arguments[index]
                index += 1
            } else if argument.hasPrefix("--home=") {
                homeOption = String(argument.dropFirst("--home=".count))
            } else if argument == "--help" || argument == "-h" {
                wantsHelp = true
            } else {
                rest.append(argument)
            }
        }
        if rest.first == "help" || rest.isEmpty {
            terminal.write(try HelpText.text(for: Array(rest.dropFirst())))
            return
        }
        let (spec, consumed) = try find(rest)
        if wantsHelp {
            terminal.write(HelpText.text(for: spec))
            return
        }
        if rest.first == "version" || rest.first == "--version" {
            terminal.line("walletvault 1 (vault format v1)")
            return
        }
        let parsed = try ParsedArguments(Array(rest.dropFirst(consumed)), spec: spec.arguments, command: spec.name)
        let home = ProfileHome.resolve(option: homeOption)
        try await spec.run(CommandContext(arguments: parsed, terminal: terminal, home: home))
    }

    /// The command named by the first one or two words, and how many words named it.
    static func find(_ words: [String]) throws(CLIError) -> (CommandSpec, Int) {
        if words.count >= 2, let spec = commands.first(where: { $0.name == "\(words[0]) \(words[1])" }) { return (spec, 2) }
        if let spec = commands.first(where: { $0.name == words[0] }) { return (spec, 1) }
        if commands.contains(where: { $0.name.hasPrefix(words[0] + " ") }) {
            throw CLIError.usage(
                "\(words[0]) needs one of: " + subcommands(of: words[0]).map { "`\($0.name)`" }.joined(separator: ", "),
                command: words[0])
        }
        throw CLIError.usage("unknown command \(words[0])")
    }

    /// The commands named `group …` (`pair request`, `pair approve`).
    static func subcommands(of group: String) -> [CommandSpec] {
        commands.filter { $0.name.hasPrefix(group + " ") }
    }
}
