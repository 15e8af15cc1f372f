import Foundation
import VaultCore
import WalletVault

/// `walletvault status`: the profile, this device's key and vault, and whether the server has something newer.
enum StatusCommand {
    static let spec = CommandSpec(
        name: "status",
        usage: ["status [--offline]"],
        summary: "Show the profile, this device's key and vault, pending edits, and the server's version.",
        details: """
            Reads the local files, then asks the server (one conditional load; --offline skips it) whether a newer
            version exists. A server problem is shown in the output, not as a failure: status exits 0 whenever the
            profile can be read.
            Example: walletvault status
            """,
        arguments: .init(flags: ["--offline"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "status")
        let session = try context.session()
        let terminal = context.terminal
        terminal.line("profile   \(context.home.directory.path)")
        terminal.line("server    \(session.profile.server) (\(session.profile.auth.summary))")
        let key: String
        do {
            key = try session.store.deviceKey().map { "key \($0.kekID)" } ?? "no key yet"
        } catch {
            key = "key INVALIDATED: run `walletvault recover --code`"
        }
        terminal.line("device    \"\(session.profile.label)\", \(key)")
        let record = await session.engine.status()
        let document = try? await session.engine.document()
        if let erased = record.erasedAt, document == nil {
            terminal.line("vault     erased from the server by this device at \(UTCTimestamp(millisecondsSinceEpoch: erased).description)")
        } else if let document {
            terminal.line(
                "vault     \(document.liveValues.count) item(s), synced version \(record.syncedVersion ?? "none")"
                    + (record.hasLocalEdits ? ", edits not yet saved" : ""))
        } else {
            terminal.line("vault     none on this device")
        }
        if let next = record.nextAttemptAt, next > Int64(Date().timeIntervalSince1970 * 1000) {
            terminal.line("limited   the server accepts saves again at \(UTCTimestamp(millisecondsSinceEpoch: next).description)")
        }
        if let health = try? await session.engine.keyHealth(), let warning = health.warning {
            terminal.line("warning   \(warning)")
        }
        guard !context.arguments.has("--offline") else { return }
        let line: String
        do {
            switch try await session.backup.load(ifNoneMatch: record.syncedVersion) {
            case .notModified: line = "up to date"
            case .blob(let snapshot) where snapshot.syncID == record.syncedVersion:
                line = "up to date"
            case .blob(let snapshot):
                switch await session.engine.assess(snapshot.blob) {
                case .newer: line = "version \(snapshot.syncID) is newer: run `walletvault sync`"
                case .older(let counter, let highest):
                    line =
                        "version \(snapshot.syncID) is OLDER than this device has seen (counter \(counter.map(String.init) ?? "none") "
                        + "< \(highest)): the server rolled the vault back; a sync refuses it and changes nothing: report it to the "
                        + "server's operator"
                case .unreadable(let reason): line = "version \(snapshot.syncID) is not a readable vault (\(reason)): report it"
                }
            }
        } catch .notFound {
            line = "no vault stored for this account"
        } catch {
            line = "unreachable or refusing: " + session.translate(SyncError(.server, "load", backupError: error)).message
        }
        terminal.line("remote    \(line)")
    }
}
