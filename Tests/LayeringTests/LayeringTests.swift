import Foundation
import Testing

/// The layering rule, read from the sources: a module imports only modules of a lower layer, the HTTP transport knows
/// nothing of WalletVault, and nothing an app links reaches a server module.
@Suite struct LayeringTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Every module under `Sources/`, by directory, and the imports of its files.
    static func importsByModule(under root: URL) throws -> [String: Set<String>] {
        let files = FileManager.default
        var result: [String: Set<String>] = [:]
        for module in try files.contentsOfDirectory(atPath: root.path) where !module.hasPrefix(".") {
            let directory = root.appendingPathComponent(module)
            var imports: Set<String> = []
            let walker = files.enumerator(at: directory, includingPropertiesForKeys: nil)
            while let file = walker?.nextObject() as? URL {
                // C helpers cannot import a Swift module.
                guard file.pathExtension == "swift" else { continue }
                imports.formUnion(ModuleLayers.imports(in: try String(contentsOf: file, encoding: .utf8)))
            }
            result[module] = imports
        }
        return result
    }

    @Test func noModuleImportsOneAboveIt() throws {
        let found = try Self.importsByModule(under: Self.sources)
        #expect(found.count > 20, "read \(found.count) modules from \(Self.sources.path)")
        let unplaced = found.keys.filter { ModuleLayers.standard.layer(of: $0) == nil }.sorted()
        #expect(unplaced.isEmpty, "modules without a layer in ModuleLayers.standard: \(unplaced)")
        #expect(ModuleLayers.standard.violations(in: found) == [])
    }

    /// The checker itself finds each kind of wrong edge, so a green run above means something.
    @Test func theCheckerFindsUpwardSidewaysAndAudienceEdges() {
        let tree: [String: Set<String>] = [
            "VaultCore": ["Foundation", "VaultServer"],  // upward
            "VaultHTTP": ["CMicroHTTPD", "VaultCore"],  // the transport reading WalletVault's rules
            "VaultStorage": ["VaultCore", "VaultJOSE"],  // sideways
            "WalletVault": ["VaultCore"],
            "WalletVaultCLI": ["WalletVault", "VaultStorage"],  // an app reaching a server module
            "VaultServer": ["VaultHTTP", "VaultStorage", "VaultCore"],
        ]
        #expect(
            ModuleLayers.standard.violations(in: tree).sorted() == [
                "VaultCore imports VaultServer (layer 1 → 5)",
                "VaultHTTP imports VaultCore: the transport knows no WalletVault module",
                "VaultStorage imports VaultJOSE (layer 4 → 4)",
                "WalletVaultCLI imports VaultStorage: an app module must not link a server module",
            ])
    }

    @Test func importsAreReadFromEverySpelling() {
        let text = """
            import Foundation
            @_exported import CryptoKit
            @testable import VaultCore
            #if canImport(Security)
                import Security
            #endif
            import struct VaultWire.WirePath
            // import VaultServer
            let text = "import VaultHTTP"
            """
        #expect(ModuleLayers.imports(in: text) == ["Foundation", "CryptoKit", "VaultCore", "Security", "VaultWire"])
    }
}
