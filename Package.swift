// swift-tools-version:6.0
import PackageDescription

/// Layers point down only: executables → VaultServer / WalletVault → VaultCrypto, VaultJSON → VaultCore.
let package = Package(
    name: "WalletVault",
    products: [
        .executable(name: "walletvault-server", targets: ["walletvault-server"]),
        .library(name: "VaultCore", targets: ["VaultCore"]),
        .library(name: "VaultJSON", targets: ["VaultJSON"]),
        .library(name: "VaultJOSE", targets: ["VaultJOSE"]),
        .library(name: "VaultCrypto", targets: ["VaultCrypto"]),
        .library(name: "VaultEnvelope", targets: ["VaultEnvelope"]),
        .library(name: "WalletVault", targets: ["WalletVault"]),
    ],
    targets: [
        // C libraries from Debian, each a module map and a one-line shim header.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        // Plain C helpers for what does not import cleanly (variadic calls, macros).
        .target(name: "CVaultShims", dependencies: ["CMicroHTTPD", "CLibCrypto"]),

        .target(name: "VaultCore"),
        .target(name: "VaultJSON", dependencies: ["VaultCore", "CJansson"]),
        .target(name: "VaultCrypto", dependencies: ["VaultCore", "CLibCrypto", "CArgon2", "CVaultShims"]),
        .target(name: "VaultJOSE", dependencies: ["VaultCore", "VaultJSON", "VaultCrypto"]),
        .target(name: "VaultEnvelope", dependencies: ["VaultCore", "VaultJSON", "VaultCrypto"]),
        .target(
            name: "VaultServer",
            dependencies: ["VaultCore", "VaultJSON", "VaultCrypto", "VaultJOSE", "CSQLite", "CMicroHTTPD", "CVaultShims"]
        ),
        .target(name: "WalletVault", dependencies: ["VaultCore", "VaultJSON", "VaultCrypto", "VaultEnvelope"]),
        .executableTarget(name: "walletvault-server", dependencies: ["VaultServer"]),
        .executableTarget(name: "walletvault-bench", dependencies: ["VaultEnvelope", "VaultCrypto"]),

        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultJSON"], resources: [.copy("Fixtures")]),
        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto", "VaultCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "VaultJOSETests", dependencies: ["VaultJOSE", "VaultCore", "VaultCrypto", "VaultJSON"], resources: [.copy("Fixtures")]),
        .testTarget(name: "WalletVaultTests", dependencies: ["WalletVault", "VaultCore", "VaultEnvelope", "VaultJOSE", "VaultCrypto"]),
        .testTarget(
            name: "VaultEnvelopeTests",
            dependencies: ["VaultEnvelope", "VaultCore", "VaultCrypto", "VaultJSON"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "VaultServerTests",
            dependencies: ["VaultServer", "VaultCore", "VaultCrypto", "VaultJSON", "VaultJOSE"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
