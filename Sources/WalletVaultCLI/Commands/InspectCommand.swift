import Foundation

/// `walletvault inspect FILE`: the server's shape check, offline, and the blob's header.
enum InspectCommand {
    static let spec = CommandSpec(
        name: "inspect",
        usage: ["inspect FILE [--max-bytes N]"],
        summary: "Check a blob offline exactly as the server's save does and print its header (no key material).",
        details: """
            Applies the server's checks in the server's order: size (--max-bytes, default 1048576), JSON (duplicate
            member names, nesting deeper than 64, invalid UTF-8), then the seed's shape. An accepted blob's header is
            printed: form, counter, updatedUtc, hint, cipher size, and per entry kek_id, alg, kdf, label, created and
            the wrapped key's size — never the wrapped keys, ciphertext, salts or public keys. A refused blob exits 9
            with the status, error code and detail the server would answer. Needs no profile or network.
            Example: walletvault inspect ~/.config/walletvault/device/synced.blob
            """,
        arguments: .init(valueOptions: ["--max-bytes"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let path = try context.arguments.requirePositionals(1, "FILE", command: "inspect")[0]
        var inspector = BlobInspector()
        if let text = context.arguments[option: "--max-bytes"] {
            guard let limit = Int(text), limit > 0 else { throw CLIError.usage("--max-bytes needs a positive number", command: "inspect") }
            inspector.maxBlobBytes = limit
        }
        let report = inspector.inspect(try FileWriter.read(path))
        switch report.verdict {
        case .accepted:
            context.terminal.line("accepted    the server would store this blob")
            for line in report.lines { context.terminal.line(line) }
        case .refused(let status, let code, let detail):
            throw CLIError(.invalidBlob, "\(path): the server would refuse it: \(status) \(code): \(detail)")
        }
    }
}
