import Foundation
import Testing
import VaultEnvelope

/// Two `--home` directories play two devices through the built binary against a real dev server.
@Suite("walletvault: two devices against a live dev server", .serialized)
struct TwoDeviceTests {
    /// Everything printed after `init` must not contain secrets: the recovery code, tokens, PEM keys.
    final class Transcript {
        var outputs: [String] = []
        func record(_ result: CLIProcess.Result) -> CLIProcess.Result {
            outputs.append(result.all)
            return result
        }
    }

    static func recoveryCode(in text: String) -> String? {
        text.range(of: #"[0-9A-Z]{5}(-[0-9A-Z]{5}){6}"#, options: .regularExpression).map { String(text[$0]) }
    }

    static func json(_ text: String) -> NSDictionary? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? NSDictionary
    }

    @Test func initPushPairPullConflictRecoverRevoke() throws {
        let bed = try CLITestBed()
        let log = Transcript()
        #expect(try bed.login("A", label: "Laptop A").code == 0)
        #expect(try bed.login("B", label: "Phone B").code == 0)

        // A creates the vault; the recovery code is shown once.
        let created = try bed.run("A", ["init"])
        #expect(created.code == 0, "\(created.all)")
        let code = try #require(Self.recoveryCode(in: created.stdout))
        let codeFile = try bed.file("code.txt", code + "\n")
        let items = try bed.file("items.json", #"{"passport": {"number": "P1"}, "licence": "L1"}"#)
        let pushed = log.record(try bed.run("A", ["push", items]))
        #expect(pushed.code == 0, "\(pushed.all)")
        #expect(pushed.stdout.contains("2 added"))

        // B has no key yet, pairs with A's confirmation of the six digits, and restores.
        let locked = log.record(try bed.run("B", ["pull"]))
        #expect(locked.code == 4, "\(locked.all)")
        #expect(locked.stderr.contains("pair request"))
        let requested = log.record(try bed.run("B", ["pair", "request"]))
        #expect(requested.code == 0)
        let request = try #require(requested.stdout.split(separator: "\n").first { $0.hasPrefix("wvpair1.") }.map(String.init))
        let sas = try #require(
            requested.stdout.range(of: #"[0-9]{4}( [0-9]{4}){4}"#, options: .regularExpression).map { String(requested.stdout[$0]) })
        let unconfirmed = log.record(try bed.run("A", ["pair", "approve", request]))
        #expect(unconfirmed.code == 1, "no terminal and no --sas: nothing is approved")
        let wrongDigits = String(sas.map { $0 == " " ? " " : $0 == "0" ? "1" : "0" })
        #expect(log.record(try bed.run("A", ["pair", "approve", request, "--sas", wrongDigits])).code == 1)
        let approved = log.record(try bed.run("A", ["pair", "approve", request, "--sas", sas]))
        #expect(approved.code == 0, "\(approved.all)")
        #expect(approved.stdout.contains(sas))
        // B cannot tell who wrote the vault it now reads until it is given the code A printed.
        let pairingCode = try #require(NewUserPathsTests.confirmationCode(in: approved.stdout))
        let unconfirmedPull = log.record(try bed.run("B", ["pull"]))
        #expect(unconfirmedPull.code == 4 && unconfirmedPull.stderr.contains("pair confirm"), "\(unconfirmedPull.all)")
        let wrongCode = pairingCode == "000 000" ? "111 111" : "000 000"
        #expect(log.record(try bed.run("B", ["pair", "confirm", wrongCode])).code == 6)
        let confirmed = log.record(try bed.run("B", ["pair", "confirm", pairingCode]))
        #expect(confirmed.code == 0, "\(confirmed.all)")
        let outFile = bed.directory.appendingPathComponent("b-vault.json").path
        let restored = log.record(try bed.run("B", ["pull", "--out", outFile]))
        #expect(restored.code == 0, "\(restored.all)")
        let restoredText = try String(contentsOfFile: outFile, encoding: .utf8)
        #expect(Self.json(restoredText) == ["passport": ["number": "P1"], "licence": "L1"])
        let mode = try FileManager.default.attributesOfItem(atPath: outFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // Different items on each side merge silently.
        #expect(log.record(try bed.run("A", ["push", "--item", "a-only", try bed.file("a.json", #"{"x": 1}"#)])).code == 0)
        let merged = log.record(try bed.run("B", ["push", "--item", "b-only", try bed.file("b.txt", "text item")]))
        #expect(merged.code == 0, "\(merged.all)")
        #expect(merged.stdout.contains("Merged"))
        let aView = log.record(try bed.run("A", ["pull"]))
        #expect(Self.json(aView.stdout) == ["passport": ["number": "P1"], "licence": "L1", "a-only": ["x": 1], "b-only": "text item"])

        // The same item on both sides: not at a terminal, exit 3 and nothing overwritten; then a decision.
        #expect(log.record(try bed.run("A", ["push", "--item", "passport", try bed.file("pa.json", #""from A""#)])).code == 0)
        let conflict = log.record(try bed.run("B", ["push", "--item", "passport", try bed.file("pb.json", #""from B""#)]))
        #expect(conflict.code == 3, "\(conflict.all)")
        #expect(conflict.stderr.contains("passport") && conflict.stderr.contains("--keep"))
        #expect(log.record(try bed.run("B", ["status", "--offline"])).stdout.contains("edits not yet saved"))
        #expect(log.record(try bed.run("B", ["sync", "--keep", "local"])).code == 0)
        #expect(log.record(try bed.run("A", ["pull", "--item", "passport"])).stdout == "from B")

        // The whole-file form deletes what the file no longer has.
        let aFile = bed.directory.appendingPathComponent("a-vault.json").path
        #expect(log.record(try bed.run("A", ["pull", "--out", aFile])).code == 0)
        try bed.file("a-vault.json", #"{"passport": "from B", "licence": "L1", "a-only": {"x": 1}}"#)
        let removed = log.record(try bed.run("A", ["push", aFile]))
        #expect(removed.stdout.contains("1 removed (b-only)"), "\(removed.all)")
        #expect(Self.json(log.record(try bed.run("B", ["pull"])).stdout)?["b-only"] == nil)

        // B's key is invalidated: sync says so; the secret is never taken from the command line.
        try Data("destroyed by the platform".utf8).write(to: bed.home("B").appendingPathComponent("device/device-key.pem"))
        let dead = log.record(try bed.run("B", ["sync"]))
        #expect(dead.code == 4 && dead.stderr.contains("invalidated"), "\(dead.all)")
        let noTerminal = log.record(try bed.run("B", ["recover", "--code"]))
        #expect(noTerminal.code == 1 && noTerminal.stderr.contains("--code-file"))
        #expect(log.record(try bed.run("B", ["recover", "--code", code])).code == 1, "a code on argv is refused")
        let otherCode = try bed.file("other.txt", RecoveryCode.generate().formatted)
        #expect(log.record(try bed.run("B", ["recover", "--code-file", otherCode])).code == 4)
        var typo = Array(code)
        typo[0] = typo[0] == "A" ? "B" : "A"
        let mistyped = log.record(try bed.run("B", ["recover", "--code-file", try bed.file("typo.txt", String(typo))]))
        #expect(mistyped.code == 1 && mistyped.stderr.contains("group"), "\(mistyped.all)")
        let recovered = log.record(try bed.run("B", ["recover", "--code-file", codeFile]))
        #expect(recovered.code == 0, "\(recovered.all)")
        #expect(Self.json(log.record(try bed.run("B", ["pull"])).stdout)?["passport"] as? String == "from B")

        // A revokes B; the recovery entry survives only because the code is offered.
        let bKey = try String(contentsOf: bed.home("B").appendingPathComponent("device/device-kek-id"), encoding: .utf8)
        let listed = log.record(try bed.run("A", ["devices"]))
        #expect(listed.stdout.contains(bKey) && listed.stdout.contains("Recovery code") && listed.stdout.contains("Phone B"))
        // Both devices show the same vault fingerprint, the one a person compares after a revocation.
        let fingerprint = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("Vault fingerprint") }.map(String.init) }
        let onA = try #require(fingerprint(listed.stdout))
        let onB = fingerprint(log.record(try bed.run("B", ["devices", "--offline"])).stdout)
        #expect(onA.contains("epoch 1") && onB == onA)
        #expect(log.record(try bed.run("A", ["revoke", bKey])).code == 1, "without the code or --drop-recovery, nothing is revoked")
        let revoked = log.record(try bed.run("A", ["revoke", String(bKey.prefix(8)), "--code-file", codeFile]))
        #expect(revoked.code == 0, "\(revoked.all)")
        #expect(revoked.stdout.contains("No other entry was dropped"))
        #expect(log.record(try bed.run("B", ["sync"])).code == 4)
        let after = log.record(try bed.run("A", ["devices"]))
        #expect(!after.stdout.contains(bKey) && after.stdout.contains("Recovery code"))
        // The revocation rotated the vault secret: B, which still knows epoch 1's, cannot write for A any more.
        #expect(fingerprint(after.stdout)?.contains("epoch 2") == true)

        // Nothing printed after init holds a secret.
        for output in log.outputs {
            #expect(!output.contains(code), "the recovery code is shown only by init")
            #expect(!output.contains("PRIVATE KEY") && !output.contains("eyJ"), "no key or token is printed")
        }
    }

    @Test func passphraseRecoveryAndRevocationThatDropsAnEntry() throws {
        let bed = try CLITestBed()
        let passphrase = try bed.file("pass.txt", "correct horse battery staple\n")
        #expect(try bed.login("A", sub: "carol", label: "A").code == 0)
        let created = try bed.run("A", ["init", "--passphrase-file", passphrase])
        #expect(created.code == 0, "\(created.all)")
        #expect(created.stdout.contains("passphrase entry"))
        #expect(try bed.run("A", ["push", "--item", "k", try bed.file("k.txt", "v")]).code == 0)

        // A new device opens the vault with the passphrase alone; a wrong one is refused.
        #expect(try bed.login("C", sub: "carol", label: "C").code == 0)
        #expect(try bed.run("C", ["recover", "--passphrase-file", try bed.file("wrong.txt", "not the passphrase")]).code == 4)
        let recovered = try bed.run("C", ["recover", "--passphrase-file", passphrase])
        #expect(recovered.code == 0, "\(recovered.all)")
        #expect(try bed.run("C", ["pull", "--item", "k"]).stdout == "v")

        // Revoking C while dropping the recovery entries says which entries went.
        let cKey = try String(contentsOf: bed.home("C").appendingPathComponent("device/device-kek-id"), encoding: .utf8)
        let revoked = try bed.run("A", ["revoke", cKey, "--drop-recovery"])
        #expect(revoked.code == 0, "\(revoked.all)")
        #expect(revoked.stdout.contains("Dropped \"Recovery code\"") && revoked.stdout.contains("Dropped \"Passphrase\""))
        let devices = try bed.run("A", ["devices"])
        #expect(devices.stdout.contains("warning:"), "one way in left: the key-health warning shows")
    }

    @Test func initTwiceRateLimitAndLoginFailures() throws {
        let bed = try CLITestBed(savesPerHour: 2)
        #expect(try bed.run("A", ["status"]).code == 7, "no profile yet")
        #expect(try bed.login("A", label: "A").code == 0)
        #expect(try bed.run("A", ["init"]).code == 0)
        #expect(try bed.run("A", ["init"]).code == 8, "this profile already holds the vault")
        #expect(try bed.login("B", label: "B").code == 0)
        let second = try bed.run("B", ["init"])
        #expect(second.code == 8 && second.stderr.contains("pair request"), "\(second.all)")

        // Two saves an hour: the second push is refused, the edit stays local.
        #expect(try bed.run("A", ["push", "--item", "x", try bed.file("x1", "1")]).code == 0)
        let limited = try bed.run("A", ["push", "--item", "x", try bed.file("x2", "2")])
        #expect(limited.code == 5, "\(limited.all)")
        #expect(try bed.run("A", ["status", "--offline"]).stdout.contains("edits not yet saved"))

        // A token command: any command printing a token works; a failing one is exit 7.
        let minted = try CLIProcess.run(
            ["login", "--server", bed.server.baseURL.absoluteString, "--dev", "--sub", "dave", "--azp", "x"],
            home: bed.home("D"))
        #expect(minted.code == 0)
        let tokenFile = try bed.file("token", try devToken(bed, sub: "erin"))
        let viaCommand = try CLIProcess.run(
            ["login", "--server", bed.server.baseURL.absoluteString, "--token-command", "cat \(tokenFile)"],
            home: bed.home("E"))
        #expect(viaCommand.code == 0, "\(viaCommand.all)")
        let failing = try CLIProcess.run(
            ["login", "--server", bed.server.baseURL.absoluteString, "--token-command", "exit 3"],
            home: bed.home("F"))
        #expect(failing.code == 7 && failing.stderr.contains("token command failed"), "\(failing.all)")
        let refused = try CLIProcess.run(
            ["login", "--server", bed.server.baseURL.absoluteString, "--token-command", "echo not-a-jwt"],
            home: bed.home("G"))
        #expect(refused.code == 7, "\(refused.all)")
        let unreachable = try CLIProcess.run(
            ["login", "--server", "http://127.0.0.1:9", "--dev", "--sub", "a", "--azp", "b"], home: bed.home("H"))
        #expect(unreachable.code == 2, "\(unreachable.all)")
        #expect(try CLIProcess.run(["push"], home: bed.home("A")).code == 1)
        #expect(try CLIProcess.run(["frobnicate"]).code == 1)
    }

    /// A development access token, minted as `curl -d sub=… -d azp=…` would.
    func devToken(_ bed: CLITestBed, sub: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = [
            "-s", "-X", "POST", bed.server.baseURL.appendingPathComponent("dev-oidc/token").absoluteString,
            "-d", "sub=\(sub)", "-d", "azp=oem-a",
        ]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return try #require(object?["access_token"] as? String)
    }
}
