import Foundation

/// The layers of WalletVault's modules, lowest first, and the edges they allow.
///
/// A module may import a module of a lower layer only; the toolchain's and the system's modules (Foundation,
/// CryptoKit, Glibc…) are below everything. Two rules cut across the layers: the HTTP transport imports no WalletVault
/// module at all, and no module an app links (the SDK and the command line) imports a server module.
struct ModuleLayers {
    let layers: [[String]]
    let transport: Set<String>
    let appModules: Set<String>
    let serverModules: Set<String>

    static let standard = ModuleLayers(
        layers: [
            // 0: C libraries from Debian and the small C helpers.
            [
                "CLibCrypto", "CArgon2", "CSQLite", "CLibPQ", "CMicroHTTPD", "CJansson", "CYajl", "CVaultShims", "CVaultCryptoShims",
                "CBase64URL", "CJSONScan",
            ],
            // 1: rules without I/O.
            ["VaultCore"],
            // 2: the wire contract.
            ["VaultWire"],
            // 3: JSON and CryptoKit's API.
            ["VaultJSON", "VaultCrypto"],
            // 4: the vault format, JOSE, the HTTP transport, storage.
            ["VaultEnvelope", "VaultJOSE", "VaultHTTP", "VaultStorage"],
            // 5: the SDK and the server application.
            ["WalletVault", "VaultServer"],
            // 6: the command line's logic and the development issuer.
            ["WalletVaultCLI", "VaultDevIssuer"],
            // 7: executables.
            ["walletvault", "walletvault-server", "walletvault-bench"],
        ],
        transport: ["VaultHTTP"],
        appModules: ["WalletVault", "WalletVaultCLI", "walletvault"],
        serverModules: ["VaultHTTP", "VaultStorage", "VaultServer", "VaultDevIssuer", "CMicroHTTPD", "CSQLite", "CLibPQ", "CVaultShims"])

    /// The layer of a project module, or nil for one the table does not place.
    func layer(of module: String) -> Int? {
        layers.firstIndex { $0.contains(module) }
    }

    /// Every edge in `imports` (module → what its files import) that breaks a rule, described.
    func violations(in imports: [String: Set<String>]) -> [String] {
        var found: [String] = []
        for (module, imported) in imports {
            for dependency in imported.sorted() where dependency != module {
                // Modules outside the table are the toolchain's and the system's.
                guard let to = layer(of: dependency), let from = layer(of: module) else { continue }
                if appModules.contains(module) && serverModules.contains(dependency) {
                    found.append("\(module) imports \(dependency): an app module must not link a server module")
                } else if transport.contains(module) && to > 0 {
                    found.append("\(module) imports \(dependency): the transport knows no WalletVault module")
                } else if to >= from {
                    found.append("\(module) imports \(dependency) (layer \(from) → \(to))")
                }
            }
        }
        return found
    }

    /// The modules a Swift text imports; a line comment or a string literal holding `import` is not read as one.
    static func imports(in text: String) -> [String] {
        var modules: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            // Attributes first (@_exported, @testable, @preconcurrency), then `import`, an optional kind, the path.
            guard let position = words.firstIndex(of: "import"), words[..<position].allSatisfy({ $0.hasPrefix("@") }),
                position + 1 < words.count
            else { continue }
            var path = words[position + 1]
            if ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(path), position + 2 < words.count {
                path = words[position + 2]
            }
            if let module = path.split(separator: ".").first { modules.append(String(module)) }
        }
        return modules
    }
}
