import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultWire
import WalletVault

@testable import WalletVaultCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The CLI as a new user meets it, through the built binary against a real dev server: every message points the
/// right way and every exit code is the documented one.
@Suite("walletvault: what a new user is told", .serialized)
struct NewUserPathsTests {
    static func recoveryCode(in text: String) -> String? {
        text.range(of: #"[0-9A-Z]{5}(-[0-9A-Z]{5}){6}"#, options: .regularExpression).map { String(text[$0]) }
    }

    /// A logs in and creates the vault with two items; returns the recovery code file.
    func createVault(_ bed: CLITestBed) throws -> String {
        #expect(try bed.login("A", label: "Laptop A").code == 0)
        let created = try bed.run("A", ["init"])
        #expect(created.code == 0, "\(created.all)")
        let codeFile = try bed.file("code.txt", try #require(Self.recoveryCode(in: created.stdout)) + "\n")
        #expect(try bed.run("A", ["push", try bed.file("items.json", #"{"passport": "P1", "licence": "L1"}"#)]).code == 0)
        return codeFile
    }

    /// Pairs profile `name` (logged in already) to A's vault.
    func pair(_ bed: CLITestBed, _ name: String) throws {
        let requested = try bed.run(name, ["pair", "request"])
        #expect(requested.code == 0, "\(requested.all)")
        let request = try #require(requested.stdout.split(separator: "\n").first { $0.hasPrefix("wvpair1.") }.map(String.init))
        let approved = try bed.run("A", ["pair", "approve", request, "--yes"])
        #expect(approved.code == 0, "\(approved.all)")
        let code = try #require(Self.confirmationCode(in: approved.stdout))
        #expect(try bed.run(name, ["pair", "confirm", code]).code == 0)
        #expect(try bed.run(name, ["pull"]).code == 0)
    }

    /// The six digits `pair approve` prints for the new device.
    static func confirmationCode(in output: String) -> String? {
        output.range(of: #"code for it: [0-9]{3} [0-9]{3}"#, options: .regularExpression).map { String(output[$0].suffix(7)) }
    }

    /// Gives profile `name` a device key whose KEK_ID starts with `prefix`, as base64url allows.
    func seedKey(_ bed: CLITestBed, _ name: String, prefix: String) throws -> String {
        var key = try DeviceKEK.generate()
        while !key.kekID.hasPrefix(prefix) || (prefix == "-" && key.kekID.hasPrefix("--")) { key = try DeviceKEK.generate() }
        let device = ProfileHome(directory: bed.home(name)).deviceDirectory
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try OwnerOnlyFile.replace(device.appendingPathComponent("device-key.pem"), with: Array(key.privateKey.pemRepresentation.utf8))
        try OwnerOnlyFile.replace(device.appendingPathComponent("device-kek-id"), with: Array(key.kekID.utf8))
        return key.kekID
    }

    @Test func keyIDsThatStartWithADashAreRevoked() throws {
        let bed = try CLITestBed()
        let codeFile = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        #expect(try bed.login("C", label: "Tablet C").code == 0)
        let b = try seedKey(bed, "B", prefix: "--")
        let c = try seedKey(bed, "C", prefix: "-")
        try pair(bed, "B")
        try pair(bed, "C")
        let unseparated = try bed.run("A", ["revoke", b, "--code-file", codeFile])
        #expect(unseparated.code == 1)
        #expect(unseparated.stderr.contains("goes after `--`"), "\(unseparated.stderr)")
        let revokedB = try bed.run("A", ["revoke", "--code-file", codeFile, "--", b])
        #expect(revokedB.code == 0, "\(revokedB.all)")
        let revokedC = try bed.run("A", ["revoke", c, "--code-file", codeFile])
        #expect(revokedC.code == 0, "a single leading dash is a positional: \(revokedC.all)")
        let devices = try bed.run("A", ["devices"]).stdout
        #expect(!devices.contains(b) && !devices.contains(c))
    }

    @Test func aRevokedDeviceCannotEraseTheVaultWithTheLoginItStillHolds() throws {
        // Issue 26, point 6: before the writer proof this erase exited 0 and the remaining devices had no vault.
        let bed = try CLITestBed()
        let codeFile = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        let b = try seedKey(bed, "B", prefix: "")
        try pair(bed, "B")
        #expect(try bed.run("A", ["revoke", "--code-file", codeFile, "--", b]).code == 0)
        let erased = try bed.run("B", ["erase", "--yes"])
        #expect(erased.code == Int32(ExitCode.noAccess.rawValue), "\(erased.all)")
        let pulled = try bed.run("A", ["pull", "--item", "passport"])
        #expect(pulled.code == 0, "\(pulled.all)")
        #expect(pulled.stdout == "P1")
    }

    @Test func theDemosRevokeArgumentsKeepEveryKeyIDWhole() throws {
        // The demo's KEK_ID is random: every shape base64url can take must come back as the one positional.
        var ids = try (0..<200).map { _ in try DeviceKEK.generate().kekID }
        ids += ["-uf3LGzAu", "--Qx4h7", "---x", "-", "--"]
        for id in ids {
            let parsed = try ParsedArguments(
                Array(DemoScript.revokeArguments(kekID: id, codeFile: "f").dropFirst()),
                spec: RevokeCommand.spec.arguments, command: "revoke")
            #expect(parsed.positionals == [id], "\(id)")
            #expect(parsed[option: "--code-file"] == "f")
        }
    }

    @Test func helpForEveryCommandAndGroupExitsZero() throws {
        let names = Set(WalletVaultTool.commands.flatMap { spec in [spec.name, String(spec.name.split(separator: " ")[0])] })
        for name in names.sorted() {
            let help = try CLIProcess.run(["help"] + name.split(separator: " ").map(String.init))
            #expect(help.code == 0, "help \(name): \(help.all)")
            #expect(help.stdout.contains("Usage:\n  walletvault [--home DIR] \(name)"), "help \(name)")
        }
    }

    @Test func usageErrorsSayWhatHappenedAndWhatToDo() throws {
        for arguments in [["push", "--bogus"], ["frobnicate"], ["pair"], ["revoke"], ["sync", "--keep", "mine"], ["--home"]] {
            let result = try CLIProcess.run(arguments)
            #expect(result.code == 1, "\(arguments)")
            let line = result.stderr.trimmingCharacters(in: .newlines)
            #expect(
                line.range(of: #"^walletvault: [^\n]+: run `walletvault help[^`]*` for [^\n]+$"#, options: .regularExpression) != nil,
                "\(arguments): \(line)")
        }
    }

    @Test func anAccountWithoutAVaultSaysInitEverywhere() throws {
        let bed = try CLITestBed()
        #expect(try bed.login("A", label: "Laptop A").code == 0)
        let items = try bed.file("items.json", #"{"a": 1}"#)
        for arguments in [["pull"], ["push", items], ["devices"], ["sync"], ["pair", "request"]] {
            let result = try bed.run("A", arguments)
            #expect(result.code == 8, "\(arguments): \(result.all)")
            #expect(result.stderr.contains("walletvault init"), "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains("{}"), "\(arguments)")
        }
    }

    @Test func aWrongRecoveryCodeIsCalledThat() throws {
        let bed = try CLITestBed()
        _ = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        let other = try bed.file("other.txt", RecoveryCode.generate().formatted + "\n")
        let result = try bed.run("B", ["recover", "--code-file", other])
        #expect(result.code == 4, "\(result.all)")
        #expect(result.stderr.contains("this recovery code does not open the vault"), "\(result.stderr)")
        #expect(!result.stderr.contains("pair request`: run"), "\(result.stderr)")
    }

    @Test func aFreshDeviceRecoveringHasNoPreviousKeyToName() throws {
        let bed = try CLITestBed()
        let codeFile = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        #expect(try bed.run("B", ["pull"]).code == 4)
        let recovered = try bed.run("B", ["recover", "--code-file", codeFile])
        #expect(recovered.code == 0, "\(recovered.all)")
        #expect(!recovered.stdout.contains("previous key"), "\(recovered.stdout)")
        // A device whose key really was in the vault is told it was removed.
        try Data((0..<64).map { _ in UInt8.random(in: 0...255) }).write(to: ProfileHome(directory: bed.home("B")).deviceKeyFile)
        let again = try bed.run("B", ["recover", "--code-file", codeFile])
        #expect(again.code == 0, "\(again.all)")
        #expect(again.stdout.contains("was removed from the vault"), "\(again.stdout)")
    }

    @Test func aRevokedDeviceIsToldItsKeyWasRemovedAndByWhom() throws {
        let bed = try CLITestBed()
        let codeFile = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        try pair(bed, "B")
        let id = try String(
            contentsOf: ProfileHome(directory: bed.home("B")).deviceDirectory.appendingPathComponent("device-kek-id"),
            encoding: .utf8)
        #expect(try bed.run("A", ["revoke", "--code-file", codeFile, "--", id]).code == 0)
        let result = try bed.run("B", ["sync"])
        #expect(result.code == 4, "\(result.all)")
        #expect(result.stderr.contains("removed from the vault by \"Laptop A\""), "\(result.stderr)")
    }

    @Test func revokeWithANewRecoveryCodeAndRecoveryRotateLockOutTheOldCode() throws {
        // Issue 26 point 5: B saw the recovery code (it recovered with it, say); revoking B must be able to end that.
        let bed = try CLITestBed()
        let oldCode = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        try pair(bed, "B")
        let id = try String(
            contentsOf: ProfileHome(directory: bed.home("B")).deviceDirectory.appendingPathComponent("device-kek-id"),
            encoding: .utf8)
        let revoked = try bed.run("A", ["revoke", "--new-recovery-code", "--", id])
        #expect(revoked.code == 0, "\(revoked.all)")
        let newCode = try #require(Self.recoveryCode(in: revoked.stdout))
        #expect(try String(contentsOfFile: oldCode, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) != newCode)
        #expect(try bed.login("C", label: "Fresh C").code == 0)
        #expect(try bed.run("C", ["recover", "--code-file", oldCode]).code == 4, "the old code still opens the vault")
        let newFile = try bed.file("new-code.txt", newCode + "\n")
        let recovered = try bed.run("C", ["recover", "--code-file", newFile])
        #expect(recovered.code == 0, "\(recovered.all)")

        // At any time: `recovery rotate` replaces the code again, every device stays in.
        let rotated = try bed.run("A", ["recovery", "rotate"])
        #expect(rotated.code == 0, "\(rotated.all)")
        let third = try #require(Self.recoveryCode(in: rotated.stdout))
        #expect(third != newCode)
        #expect(try bed.run("C", ["sync"]).code == 0)
        #expect(try bed.login("D", label: "Fresh D").code == 0)
        #expect(try bed.run("D", ["recover", "--code-file", newFile]).code == 4)
        #expect(try bed.run("D", ["recover", "--code-file", try bed.file("third.txt", third + "\n")]).code == 0)
    }

    @Test func aKeyFileOfRandomBytesIsAnInvalidatedKey() throws {
        let bed = try CLITestBed()
        _ = try createVault(bed)
        try Data((0..<200).map { _ in UInt8.random(in: 0...255) }).write(to: ProfileHome(directory: bed.home("A")).deviceKeyFile)
        let status = try bed.run("A", ["status", "--offline"])
        #expect(status.stdout.contains("INVALIDATED"), "\(status.stdout)")
        #expect(!status.stdout.contains("no key yet"))
        let sync = try bed.run("A", ["sync"])
        #expect(sync.code == 4, "\(sync.all)")
        #expect(sync.stderr.contains("recover"))
    }

    @Test func statusCallsARolledBackBlobOlder() async throws {
        let bed = try CLITestBed()
        let codeFile = try createVault(bed)
        let device = ProfileHome(directory: bed.home("A")).deviceDirectory
        let oldBlob = try Data(contentsOf: device.appendingPathComponent("synced.blob"))
        #expect(try bed.run("A", ["push", "--item", "ticket", try bed.file("t.txt", "T1")]).code == 0)
        // A server replays from its own database; through the API the replay needs a member's write proof, here made
        // with the identity the recovery code opens.
        let code = try RecoveryCode(parsing: try String(contentsOfFile: codeFile, encoding: .utf8))
        let opened = try await VaultOpener(counterStore: InMemoryCounterStore()).open(
            try Data(contentsOf: device.appendingPathComponent("synced.blob")), vaultID: "vault", keys: [try RecoveryCodeKEK(code: code)])
        let current = try #require(try LocalVaultStore(directory: device).syncRecord().syncedVersion)
        try bed.rawSave(oldBlob, sub: "alice", over: current, writeKey: try #require(opened.state.identity).writeKey)
        let status = try bed.run("A", ["status"])
        #expect(status.stdout.contains("OLDER than this device has seen"), "\(status.stdout)")
        #expect(!status.stdout.contains("is newer"))
        #expect(try bed.run("A", ["sync"]).code == 6)
    }

    @Test func pullOfflineReadsThisDevicesCopyWhenTheServerIsDownOrAConflictWaits() throws {
        let bed = try CLITestBed()
        _ = try createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        try pair(bed, "B")
        // A conflict: B's pull stops (exit 3) and points at --offline, which shows B's own edit.
        #expect(try bed.run("A", ["push", "--item", "passport", try bed.file("pa.txt", "from A")]).code == 0)
        #expect(try bed.run("B", ["push", "--item", "passport", try bed.file("pb.txt", "from B")]).code == 3)
        let blocked = try bed.run("B", ["pull"])
        #expect(blocked.code == 3)
        #expect(blocked.stderr.contains("pull --offline"), "\(blocked.stderr)")
        let offline = try bed.run("B", ["pull", "--offline", "--item", "passport"])
        #expect(offline.code == 0, "\(offline.all)")
        #expect(offline.stdout == "from B")
        #expect(offline.stderr.contains("edits not yet saved"))
        // The server is down: pull fails (exit 2) naming --offline, which works.
        bed.server.stop()
        let down = try bed.run("A", ["pull"])
        #expect(down.code == 2)
        #expect(down.stderr.contains("pull --offline"), "\(down.stderr)")
        let read = try bed.run("A", ["pull", "--offline"])
        #expect(read.code == 0, "\(read.all)")
        #expect(read.stdout.contains("\"passport\": \"from A\""))
    }

    @Test func pullStillReadsWhenTheSaveLimitKeepsEditsLocal() throws {
        let bed = try CLITestBed(savesPerHour: 2)
        _ = try createVault(bed)
        let limited = try bed.run("A", ["push", "--item", "ticket", try bed.file("t.txt", "T1")])
        #expect(limited.code == 5, "\(limited.all)")
        let pulled = try bed.run("A", ["pull"])
        #expect(pulled.code == 0, "documented: pull read everything (\(pulled.all))")
        #expect(pulled.stderr.contains("Rate-limited"))
        #expect(pulled.stdout.contains("\"ticket\": \"T1\""))
    }

    @Test func historyRestoreAndErase() throws {
        let bed = try CLITestBed()
        _ = try createVault(bed)
        let before = try bed.run("A", ["history"])
        #expect(before.code == 0, "\(before.all)")
        let old = try #require(
            before.stdout.split(separator: "\n").first { $0.hasPrefix("* ") }.map { String($0.split(separator: " ")[1]) })
        #expect(try bed.run("A", ["push", "--item", "passport", try bed.file("p2.txt", "P2")]).code == 0)
        let restored = try bed.run("A", ["restore", old])
        #expect(restored.code == 0, "\(restored.all)")
        #expect(restored.stdout.contains("Restored the content of version \(old)"))
        #expect(try bed.run("A", ["pull", "--item", "passport"]).stdout == "P1")
        #expect(try bed.run("A", ["restore", "2001-01-01T00:00:00.000Z"]).code == 8, "a version not kept")

        let refused = try bed.run("A", ["erase"])
        #expect(refused.code == 1, "no terminal and no --yes: \(refused.all)")
        #expect(try bed.run("A", ["history"]).code == 0, "nothing was erased")
        let erased = try bed.run("A", ["erase", "--yes"])
        #expect(erased.code == 0, "\(erased.all)")
        #expect(try bed.run("A", ["status", "--offline"]).stdout.contains("erased from the server"))
        #expect(try bed.run("A", ["pull"]).code == 8)
        #expect(try bed.run("A", ["init"]).code == 0, "a new vault can be created after an erasure")
    }
}

extension CLITestBed {
    /// Saves `blob` for `sub` straight through D1 and D2 over the stored version `storedSyncID`, proving it with
    /// that version's `writeKey`, as a dishonest or broken server would serve it back.
    func rawSave(_ blob: Data, sub: String, over storedSyncID: String, writeKey: P256.Signing.PrivateKey) throws {
        let message = WriteProof.message(
            action: .save, storedSyncID: storedSyncID, bodyDigest: Data(SHA256.hash(data: blob)),
            nextWriteKey: writeKey.publicKey.rawRepresentation)
        let proof = [
            WriteProof.writeKeyHeader: Base64URL.encode(writeKey.publicKey.rawRepresentation),
            WriteProof.proofHeader: Base64URL.encode(try writeKey.signature(for: message).rawRepresentation),
        ]
        func post(_ path: String, query: String? = nil, bearer: String? = nil, form: String? = nil, body: Data? = nil) throws -> Data {
            var components = URLComponents(url: server.baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
            components.query = query
            var request = URLRequest(url: components.url!)
            request.httpMethod = "POST"
            if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
            if let form {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(form.utf8)
            } else {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                for (name, value) in proof { request.setValue(value, forHTTPHeaderField: name) }
                request.httpBody = body
            }
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var answer = Data()
            URLSession.shared.dataTask(with: request) { data, _, _ in
                answer = data ?? Data()
                done.signal()
            }.resume()
            done.wait()
            return answer
        }
        func token(_ data: Data) throws -> String {
            try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["access_token"] as? String)
        }
        let oidc = try token(try post("dev-oidc/token", form: "sub=\(sub)&azp=oem-a"))
        let session = try token(try post("wallet-session-token.ashx", bearer: oidc))
        let answer = try post("wallet-backup.ashx", query: "action=save", bearer: session, body: blob)
        #expect(String(decoding: answer, as: UTF8.self).contains("\"ok\":true"), "raw save: \(String(decoding: answer, as: UTF8.self))")
    }
}
