import Foundation
import Testing

/// What the Apple code must say, read from its source: nothing here runs it (no Apple toolchain), so the rules that
/// live in query dictionaries and compile conditions are checked as text (issue #28 points 3, 6, 7, 9, 10).
@Suite("The Apple platform code, read as text")
struct ApplePlatformSourceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let platform = root.appendingPathComponent("Sources/WalletVault/Platform")

    /// The Apple files of `Platform/` (those guarded by `canImport(Security)`), by name.
    static func appleSources() throws -> [(name: String, text: String)] {
        try FileManager.default.contentsOfDirectory(atPath: platform.path).sorted().compactMap { name in
            let text = try String(contentsOf: platform.appendingPathComponent(name), encoding: .utf8)
            return text.contains("canImport(Security)") ? (name, text) : nil
        }
    }

    /// The text of each function (from one `func ` to the next) of `text`.
    static func functions(_ text: String) -> [String] {
        text.components(separatedBy: "func ").dropFirst().map { String($0) }
    }

    @Test func everyKeychainQueryUsesTheDataProtectionKeychain() throws {
        let files = try Self.appleSources()
        #expect(files.count >= 3)
        for (name, text) in files {
            // Every dictionary that names an item class is a query; TN3137: without the key, macOS uses the file-based keychain.
            var rest = Substring(text)
            while let range = rest.range(of: "kSecClass as String:") {
                let literal = rest[range.lowerBound...].prefix { $0 != "]" }
                #expect(literal.contains("kSecUseDataProtectionKeychain as String: true"), "\(name): \(literal.prefix(120))")
                rest = rest[range.upperBound...]
            }
        }
    }

    @Test func everyReadPassesAContextAndThoseThatMustNotPromptANonInteractiveOne() throws {
        // Without kSecUseAuthenticationContext "a new context will be created, used once, and discarded": a prompt.
        var silent: Set<String> = []
        for (name, text) in try Self.appleSources() {
            for function in Self.functions(text) where function.contains("SecItemCopyMatching(") {
                #expect(function.contains("kSecUseAuthenticationContext"), "\(name): \(function.prefix(60))")
                if function.contains("interactionNotAllowed = true") || function.contains("context(allowingPrompts: false)") {
                    silent.insert(String(function.prefix { $0 != "(" }))
                }
            }
        }
        // The reads that must never prompt: the key item's attributes, the symmetric key's id, the at-rest key.
        #expect(silent.isSuperset(of: ["readItem", "storedKEK", "atRestKey"]), "\(silent)")
    }

    @Test func theSoftwareFallbackIsForTheSimulatorAndMacsWithoutASecureEnclave() throws {
        let text = try String(contentsOf: Self.platform.appendingPathComponent("SecureEnclaveKeychain.swift"), encoding: .utf8)
        #expect(text.contains("#if targetEnvironment(simulator)"), "SecureEnclave.isAvailable is true on recent simulators")
    }

    @Test func onlyIOSAndMacOSCompileTheAppleCode() throws {
        let package = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(package.contains("platforms: [.iOS(.v15), .macOS(.v12)]"))
        for (name, text) in try Self.appleSources() {
            // watchOS and tvOS have no LAContext.localizedReason; they are not declared and must not compile this.
            #expect(text.contains("(os(iOS) || os(macOS))"), "\(name)")
        }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("watchOS"), "the README says which Apple platforms are declared")
    }

    @Test func theReadmeSaysWhatDeviceLabelAnAppGets() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("com.apple.developer.device-information.user-assigned-device-name"))
    }
}
