/// A command's arguments after hand-rolled parsing: positionals, `--option VALUE` (or `--option=VALUE`) and flags.
///
/// Each command declares what it takes; anything else is a usage error, so a typo never silently does something else.
public struct ParsedArguments: Sendable, Equatable {
    /// What a command accepts.
    public struct Spec: Sendable {
        /// Options that take a value.
        public var valueOptions: Set<String>
        /// Options that take none.
        public var flags: Set<String>

        /// Creates a spec.
        public init(valueOptions: Set<String> = [], flags: Set<String> = []) {
            self.valueOptions = valueOptions
            self.flags = flags
        }
    }

    /// Arguments that are not options, in order.
    public var positionals: [String] = []
    /// Option values by name (with the dashes); the last occurrence wins.
    public var options: [String: String] = [:]
    /// Flags given.
    public var flags: Set<String> = []

    /// Creates an empty result.
    public init() {}

    /// Parses `arguments` by `spec`; `--` ends options.
    ///
    /// Options are long (`--name`): a word with a single leading dash (`-uf3L…`, a KEK_ID is base64url) is a
    /// positional, as is `-` (standard input). A positional that starts with `--` goes after `--`.
    /// - Throws: `CLIError` `.usage` for an unknown option or a missing value.
    public init(_ arguments: [String], spec: Spec, command: String? = nil) throws(CLIError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("--") else {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if spec.flags.contains(name), inlineValue == nil {
                flags.insert(name)
            } else if spec.valueOptions.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw CLIError.usage("\(name) needs a value", command: command) }
                    options[name] = arguments[index]
                    index += 1
                }
            } else {
                throw CLIError.usage(
                    "unknown option \(name)\(command.map { " for \($0)" } ?? "") (a value that starts with -- goes "
                        + "after `--`)", command: command)
            }
        }
    }

    /// The value of `name`, if given.
    public subscript(option name: String) -> String? { options[name] }

    /// Whether flag `name` was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }

    /// Exactly `count` positionals, or a usage error naming what is expected.
    func requirePositionals(_ count: Int, _ what: String, command: String) throws(CLIError) -> [String] {
        guard positionals.count == count else {
            throw CLIError.usage(
                positionals.count < count ? "missing \(what)" : "unexpected argument \(positionals[count])",
                command: command)
        }
        return positionals
    }
}
