/// A command's name, help text and options, for dispatch and for `walletvault help`.
struct CommandSpec: Sendable {
    /// The name as typed (`pair approve` for subcommands).
    let name: String
    /// Usage lines, without the leading `walletvault`.
    let usage: [String]
    /// One sentence for the command list.
    let summary: String
    /// Longer help: what it does, its options, an example.
    let details: String
    /// The options it accepts.
    let arguments: ParsedArguments.Spec
    /// Runs it.
    let run: @Sendable (CommandContext) async throws(CLIError) -> Void
}
