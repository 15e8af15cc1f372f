import Foundation

/// The demo's story: real commands on two profiles against the demo's server, each printed before it runs.
struct DemoScript: Sendable {
    let terminal: any Terminal
    let workspace: URL
    let server: URL

    /// Runs every step; a step that does not end as the story expects stops the demo with its error.
    func play() async throws(CLIError) {
        let account = ["--server", server.absoluteString, "--dev", "--sub", "alice", "--azp", "demo-wallet"]

        step(1, "Device A creates the vault and saves two items")
        try await run("A", ["login"] + account + ["--label", "Laptop (A)"])
        let initOutput = try await run("A", ["init"])
        guard let code = initOutput.range(of: #"[0-9A-Z]{5}(-[0-9A-Z]{5}){6}"#, options: .regularExpression).map({ String(initOutput[$0]) })
        else {
            throw CLIError(.server, "demo: init printed no recovery code")
        }
        let codeFile = try write("recovery-code.txt", code + "\n")
        say("(You would write the code down; the demo keeps it in $DEMO/recovery-code.txt, mode 0600, for step 5.)")
        let items = try write(
            "items.json",
            """
            {"passport": {"type": "PID", "issuer": "https://issuer.example", "number": "X1234567"},
             "driving-licence": {"type": "mDL", "categories": ["B"]}}
            """)
        try await run("A", ["push", items])

        step(2, "Device B pairs: A checks twenty digits and enrolls B's public key; B checks A's code and restores")
        try await run("B", ["login"] + account + ["--label", "Phone (B)"])
        say("B has no key in the vault yet, so it cannot read it:")
        try await run("B", ["pull"], expect: .noAccess)
        let requestOutput = try await run("B", ["pair", "request"])
        guard let request = requestOutput.split(separator: "\n").first(where: { $0.hasPrefix("wvpair1.") }).map(String.init),
            let sas = requestOutput.range(of: #"[0-9]{4}( [0-9]{4}){4}"#, options: .regularExpression).map({ String(requestOutput[$0]) })
        else { throw CLIError(.server, "demo: pair request printed no request") }
        say("On A the same digits appear; the demo confirms with --sas as a person would by looking:")
        let approval = try await run("A", ["pair", "approve", request, "--sas", sas])
        guard
            let code = approval.range(of: #"code for it: [0-9]{3} [0-9]{3}"#, options: .regularExpression)
                .map({ String(approval[$0].suffix(7)) })
        else { throw CLIError(.server, "demo: pair approve printed no confirmation code") }
        say("B cannot know the vault it now finds on the server is A's until it checks A's code:")
        try await run("B", ["pull"], expect: .noAccess)
        try await run("B", ["pair", "confirm", code])

        step(3, "Both edit different items; the sync merges them without asking")
        let health = try write("health-card.json", #"{"type": "EHIC", "country": "FR"}"#)
        let loyalty = try write("loyalty.txt", "Member 0042, gold")
        try await run("A", ["push", "--item", "health-card", health])
        try await run("B", ["push", "--item", "loyalty-card", loyalty])
        try await run("A", ["pull"])

        step(4, "Both edit the same item: the conflict is shown, nothing is overwritten")
        let passportA = try write("passport-a.json", #"{"type": "PID", "issuer": "https://issuer.example", "number": "A7654321"}"#)
        let passportB = try write("passport-b.json", #"{"type": "PID", "issuer": "https://issuer.example", "number": "B7654321"}"#)
        try await run("A", ["push", "--item", "passport", passportA])
        say("Not at a terminal, B's sync stops with exit 3 instead of guessing (at a terminal it would ask):")
        try await run("B", ["push", "--item", "passport", passportB], expect: .conflict)
        try await run("B", ["sync", "--keep", "local"])
        try await run("A", ["pull", "--item", "passport"])

        step(5, "B's key is invalidated (as a platform does after a biometric change); the recovery code restores B")
        try write(to: ProfileHome(directory: home("B")).deviceKeyFile, "destroyed by the platform\n")
        say("The demo overwrote $DEMO/B/device/device-key.pem.")
        try await run("B", ["sync"], expect: .noAccess)
        try await run("B", ["recover", "--code-file", codeFile])
        try await run("B", ["devices"])

        step(6, "A revokes B: the data key is rotated, so B can open nothing saved from now on")
        guard
            let bKey = try? String(
                contentsOf: ProfileHome(directory: home("B")).deviceDirectory.appendingPathComponent("device-kek-id"),
                encoding: .utf8)
        else { throw CLIError(.localStorage, "demo: B has no key id") }
        say("A offers the recovery code so the recovery entry survives the rotation.")
        try await run("A", Self.revokeArguments(kekID: bKey, codeFile: codeFile))
        try await run("B", ["sync"], expect: .noAccess)
        try await run("A", ["devices"])
    }

    /// `revoke` for a KEK_ID, which is base64url and may start with `-` or `--`: options first, then `--`.
    static func revokeArguments(kekID: String, codeFile: String) -> [String] {
        ["revoke", "--code-file", codeFile, "--", kekID]
    }

    private func home(_ device: String) -> URL { workspace.appendingPathComponent(device) }

    private func step(_ number: Int, _ title: String) {
        terminal.line("")
        terminal.line("── Step \(number). \(title)")
    }

    private func say(_ text: String) { terminal.line(text) }

    /// Runs one command as `device`, prints it and its output, and checks its exit code.
    @discardableResult
    private func run(_ device: String, _ arguments: [String], expect: ExitCode = .ok) async throws(CLIError) -> String {
        // Interrupted: no next command, so nothing is written after the files are removed.
        guard !Task.isCancelled else { throw CLIError(.interrupted, "demo interrupted") }
        let shown = arguments.map { argument -> String in
            var text = argument.replacingOccurrences(of: workspace.path, with: "$DEMO")
            if text.hasPrefix("wvpair1."), text.count > 24 { text = String(text.prefix(24)) + "…" }
            return text.contains(" ") ? "\"\(text)\"" : text
        }
        terminal.line("$ walletvault --home $DEMO/\(device) " + shown.joined(separator: " "))
        let capture = CapturingTerminal(base: terminal, shortening: (workspace.path, "$DEMO"))
        let code = await WalletVaultTool.run(["--home", home(device).path] + arguments, terminal: capture)
        if code != expect.rawValue {
            throw CLIError(
                ExitCode(rawValue: code) ?? .server, "demo: `\(shown.joined(separator: " "))` exited \(code), expected \(expect.rawValue)")
        }
        if code != 0 { terminal.line("    (exit \(code), as expected)") }
        return capture.output
    }

    @discardableResult
    private func write(_ name: String, _ text: String) throws(CLIError) -> String {
        let url = workspace.appendingPathComponent(name)
        try write(to: url, text)
        return url.path
    }

    private func write(to url: URL, _ text: String) throws(CLIError) {
        try FileWriter.writeAtomically(Data(text.utf8), to: url)
    }
}
