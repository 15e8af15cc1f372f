import Foundation
import Testing
import VaultCore

@testable import WalletVaultCLI

/// The pieces under the commands, in-process: argument parsing, the file mapping, help, and profile placement.
@Suite("walletvault command logic")
struct CommandLogicTests {
    @Test func parsesOptionsFlagsAndPositionals() throws {
        let spec = ParsedArguments.Spec(valueOptions: ["--item", "--keep"], flags: ["--wait"])
        let parsed = try ParsedArguments(["--item=x", "file.json", "--wait", "--keep", "merge", "--", "--not-an-option"], spec: spec)
        #expect(parsed[option: "--item"] == "x")
        #expect(parsed[option: "--keep"] == "merge")
        #expect(parsed.has("--wait"))
        #expect(parsed.positionals == ["file.json", "--not-an-option"])
        #expect(throws: CLIError.self) { try ParsedArguments(["--nope"], spec: spec) }
        #expect(throws: CLIError.self) { try ParsedArguments(["--item"], spec: spec) }
        #expect(throws: CLIError.self) { try ParsedArguments(["--wait=1"], spec: spec) }
    }

    @Test func pushTouchesOnlyChangedItemsAndDeletesMissingOnes() {
        let current: [String: JSONValue] = ["same": .integer(1), "changed": .string("old"), "gone": .bool(true)]
        let wanted: [(key: String, value: JSONValue)] = [("same", .integer(1)), ("changed", .string("new")), ("added", .null)]
        let change = VaultFileMapping.change(from: current, to: wanted, deleteMissing: true)
        #expect(change.updates.map(\.id) == ["added", "changed"])
        #expect(change.delete == ["gone"])
        #expect(change.added == 1)
        #expect(change.summary == "Items: 1 added, 1 changed, 1 removed (gone).")
        #expect(VaultFileMapping.change(from: current, to: [("x", .integer(2))], deleteMissing: false).delete.isEmpty)
    }

    @Test func pullRendersSortedPrettyJSONThatPushReadsBack() throws {
        let values: [String: JSONValue] = ["b": .object([("k", .array([.integer(1), .string("é\"")]))]), "a": .string("t")]
        let text = VaultFileMapping.render(values)
        #expect(text.hasPrefix("{\n  \"a\": \"t\",\n  \"b\": {"))
        let back = try VaultFileMapping.items(fromVaultFile: Data(text.utf8), name: "f")
        #expect(Dictionary(uniqueKeysWithValues: back.map { ($0.key, $0.value) }) == values)
        #expect(VaultFileMapping.render(item: .string("raw")) == "raw")
        #expect(throws: CLIError.self) { try VaultFileMapping.items(fromVaultFile: Data("[1]".utf8), name: "f") }
        #expect(try VaultFileMapping.itemValue(fromFile: Data("plain text".utf8), name: "f") == .string("plain text"))
    }

    @Test func homeDefaultsFollowTheEnvironment() {
        #expect(ProfileHome.resolve(option: "/x", environment: ["WALLETVAULT_HOME": "/y"]).directory.path == "/x")
        #expect(ProfileHome.resolve(option: nil, environment: ["WALLETVAULT_HOME": "/y"]).directory.path == "/y")
        #expect(ProfileHome.resolve(option: nil, environment: ["XDG_CONFIG_HOME": "/c"]).directory.path == "/c/walletvault")
        #expect(ProfileHome.resolve(option: nil, environment: ["HOME": "/h"]).directory.path == "/h/.config/walletvault")
    }

    @Test func everyCommandHasHelpAndEveryExitCodeIsDocumented() throws {
        for spec in WalletVaultTool.commands {
            #expect(!spec.summary.isEmpty && spec.details.contains("Example: walletvault"), "\(spec.name)")
            #expect(try HelpText.text(for: spec.name.split(separator: " ").map(String.init)).contains("Usage:"))
        }
        let codes = HelpText.exitCodes
        for code in ExitCode.allCases { #expect(codes.contains("  \(code.rawValue) ")) }
        let doc = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        for code in ExitCode.allCases { #expect(doc.contains("| \(code.rawValue) |"), "docs/CLI.md documents exit \(code.rawValue)") }
        for spec in WalletVaultTool.commands { #expect(doc.contains("walletvault \(spec.name)"), "docs/CLI.md documents \(spec.name)") }
    }
}
