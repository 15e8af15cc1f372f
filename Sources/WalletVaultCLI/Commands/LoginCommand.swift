import Foundation
import WalletVault

/// `walletvault login`: records the server and how to get an OIDC token, after checking the server accepts it.
enum LoginCommand {
    static let spec = CommandSpec(
        name: "login",
        usage: [
            "login --dev --sub NAME --azp OEM [--server URL] [--label NAME]",
            "login --token-command CMD [--server URL] [--label NAME]",
        ],
        summary: "Sign this profile in: a development token, or any command that prints an OIDC access token.",
        details: """
            --server URL         the server (default: the profile's, else http://127.0.0.1:8080)
            --dev --sub --azp    mint tokens at the dev server's /dev-oidc/token (they last an hour; minted again as needed)
            --token-command CMD  run CMD with /bin/sh whenever a token is needed; it prints only the token
            --label NAME         this device's name in device lists (default: the host name)
            The token is checked by trading it for a session token (D1). Nothing secret is stored: the profile keeps
            the server, the label and how to get a token.
            Example: walletvault login --server http://127.0.0.1:8080 --dev --sub alice --azp demo-wallet --label laptop
            """,
        arguments: .init(valueOptions: ["--server", "--sub", "--azp", "--token-command", "--label"], flags: ["--dev"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let arguments = context.arguments
        _ = try arguments.requirePositionals(0, "", command: "login")
        let existing = try? context.home.loadProfile()
        let auth: Profile.Auth
        if arguments.has("--dev") {
            guard let sub = arguments[option: "--sub"], let azp = arguments[option: "--azp"], !sub.isEmpty, !azp.isEmpty else {
                throw CLIError.usage("--dev needs --sub NAME and --azp OEM", command: "login")
            }
            guard arguments[option: "--token-command"] == nil else {
                throw CLIError.usage("--dev and --token-command exclude each other", command: "login")
            }
            auth = .dev(sub: sub, azp: azp)
        } else if let command = arguments[option: "--token-command"], !command.isEmpty {
            auth = .command(command)
        } else {
            throw CLIError.usage("say how to get a token: --dev --sub NAME --azp OEM, or --token-command CMD", command: "login")
        }
        let server = (arguments[option: "--server"] ?? existing?.server ?? "http://127.0.0.1:8080")
            .trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw CLIError.usage("--server needs a URL like http://127.0.0.1:8080", command: "login")
        }
        let label = arguments[option: "--label"] ?? existing?.label ?? ProcessInfo.processInfo.hostName
        guard !label.isEmpty, label.count <= 256 else { throw CLIError.usage("--label needs 1 to 256 characters", command: "login") }
        if let existing, context.home.holdsVault, existing.server != server || (existing.auth.kind == "dev" && existing.auth != auth) {
            // The device files belong to one account's vault; pointing them at another would mix two vaults.
            throw CLIError(
                .usage,
                "this profile holds a vault of \(existing.auth.summary) at \(existing.server): "
                    + "use another --home for another server or account")
        }
        let profile = Profile(server: server, label: label, auth: auth)

        let source = TokenSource(profile: profile)
        let tokens = SessionTokenProvider(
            serverURL: url, accessToken: { try await source.accessToken() },
            retryPolicy: RetryPolicy(maxAttempts: 2))
        do {
            _ = try await ProgressIndicator.during("Checking the login", terminal: context.terminal) { () async throws(BackupError) in
                try await tokens.token()
            }
        } catch {
            if let failure = source.lastFailure { throw failure }
            throw CLIError.from(error, context: "logging in to \(server)")
        }
        try context.home.save(profile)
        context.terminal.line("Logged in to \(server) with a \(profile.auth.summary).")
        context.terminal.line("This device is \"\(label)\"; profile in \(context.home.directory.path).")
        if !context.home.holdsVault {
            context.terminal.line("Next: `walletvault init` on your first device, or `walletvault pair request` on another.")
        }
    }
}
