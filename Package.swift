// swift-tools-version:6.0
import PackageDescription

/// Layers point down only (LayeringTests reads the imports and checks it): executables → WalletVaultCLI, VaultDevIssuer
/// → WalletVault, VaultServer → VaultEnvelope, VaultJOSE, VaultHTTP, VaultStorage → VaultJSON, VaultCrypto → VaultWire
/// → VaultCore; the SDK side never reaches VaultHTTP, VaultStorage or VaultServer.
/// Debian's C libraries exist on Linux only; on Apple platforms the SDK uses CryptoKit and Foundation instead.
let linux = TargetDependencyCondition.when(platforms: [.linux])

let package = Package(
    name: "WalletVault",
    // AES key wrap in CryptoKit needs iOS 15 / macOS 12. The server and its C libraries are Linux-only.
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .executable(name: "walletvault-server", targets: ["walletvault-server"]),
        // The target is not named `walletvault`: its module and build directory would clash with `WalletVault`'s
        // on a case-insensitive file system (macOS). The product, and so the binary, is `walletvault`.
        .executable(name: "walletvault", targets: ["walletvault-cli"]),
        .library(name: "VaultCore", targets: ["VaultCore"]),
        .library(name: "VaultWire", targets: ["VaultWire"]),
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
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "CYajl", pkgConfig: "yajl", providers: [.apt(["libyajl-dev"])]),
        // Plain C helpers for what does not import cleanly (variadic calls, macros): the server's, and VaultCrypto's,
        // so that no SDK target depends on libmicrohttpd or glibc's malloc_trim.
        .target(
            name: "CVaultShims",
            dependencies: [.target(name: "CMicroHTTPD", condition: linux), .target(name: "CLibCrypto", condition: linux)]),
        .target(
            name: "CVaultCryptoShims",
            dependencies: [.target(name: "CLibCrypto", condition: linux), .target(name: "CArgon2", condition: linux)]),

        // The bulk base64url loops with AVX2, chosen at run time: Swift cannot mark one function for a CPU feature.
        .target(name: "CBase64URL"),

        // simdjson's On-Demand parser behind a C interface: Swift cannot call C++ here. Debian's libsimdjson-dev
        // (no module map of its own, C++ only), so a plain target that links it rather than a system library.
        .target(name: "CJSONScan", linkerSettings: [.linkedLibrary("simdjson")]),

        .target(name: "VaultCore", dependencies: ["CBase64URL"]),
        // The wire contract both the server and the SDK speak: paths, actions, error codes, entity tags, preconditions.
        .target(name: "VaultWire", dependencies: ["VaultCore"]),
        .target(
            name: "VaultJSON",
            dependencies: [
                "VaultCore", .target(name: "CJSONScan", condition: linux), .target(name: "CJansson", condition: linux),
                .target(name: "CYajl", condition: linux),
            ]),
        // CryptoKit itself on Apple platforms; OpenSSL (and libargon2) under CryptoKit's names on Linux.
        .target(
            name: "VaultCrypto",
            dependencies: [
                "VaultCore", .target(name: "CLibCrypto", condition: linux), .target(name: "CArgon2", condition: linux),
                .target(name: "CVaultCryptoShims", condition: linux),
            ]),
        .target(name: "VaultJOSE", dependencies: ["VaultCore", "VaultJSON", "VaultCrypto"]),
        .target(name: "VaultEnvelope", dependencies: ["VaultCore", "VaultJSON", "VaultCrypto"]),
        // The HTTP transport: libmicrohttpd behind `HTTPResponder`, knowing nothing of WalletVault.
        .target(
            name: "VaultHTTP",
            dependencies: [.target(name: "CMicroHTTPD", condition: linux), .target(name: "CVaultShims", condition: linux)]),
        // Where blobs live: the `VaultStore` protocol, SQLite, PostgreSQL and the cache in front of SQLite.
        .target(
            name: "VaultStorage",
            dependencies: ["VaultCore", "VaultWire", .target(name: "CSQLite", condition: linux), .target(name: "CLibPQ", condition: linux)]),
        // The application: endpoints, authentication, configuration, metrics and logs.
        .target(
            name: "VaultServer",
            // The server runs on Linux only; its C libraries are Linux dependencies like every other Debian library.
            dependencies: [
                "VaultCore", "VaultWire", "VaultJSON", "VaultCrypto", "VaultJOSE", "VaultHTTP", "VaultStorage",
                .target(name: "CVaultShims", condition: linux),
            ]
        ),
        // The development OIDC issuer, linked only by the executable for `--dev`.
        .target(name: "VaultDevIssuer", dependencies: ["VaultServer", "VaultHTTP", "VaultJOSE", "VaultCrypto", "VaultCore"]),
        .target(name: "WalletVault", dependencies: ["VaultCore", "VaultWire", "VaultJSON", "VaultCrypto", "VaultEnvelope"]),
        .executableTarget(name: "walletvault-server", dependencies: ["VaultServer", "VaultDevIssuer"]),
        .executableTarget(
            name: "walletvault-bench", dependencies: ["VaultEnvelope", "VaultCrypto", "VaultJSON", "VaultJOSE", "VaultCore", "VaultServer"]),
        .target(name: "WalletVaultCLI", dependencies: ["WalletVault", "VaultCore", "VaultJSON", "VaultEnvelope"]),
        .executableTarget(name: "walletvault-cli", dependencies: ["WalletVaultCLI"], path: "Sources/walletvault"),

        // What the tests of several targets share: a live server process, the in-process service, the test issuer,
        // scratch files, the PostgreSQL switch. Only test targets depend on it.
        .target(
            name: "VaultTestSupport",
            dependencies: [
                "VaultServer", "VaultStorage", "VaultHTTP", "WalletVault", "VaultCore", "VaultCrypto", "VaultJOSE", "VaultEnvelope",
                "VaultJSON",
            ],
            path: "Tests/VaultTestSupport"),

        .testTarget(name: "VaultWireTests", dependencies: ["VaultWire", "VaultCore"]),
        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultJSON"]),
        .testTarget(name: "VaultJSONTests", dependencies: ["VaultJSON", "VaultCore"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "VaultCryptoTests", dependencies: ["VaultCrypto", "VaultCore", .target(name: "CVaultCryptoShims", condition: linux)],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "VaultJOSETests", dependencies: ["VaultJOSE", "VaultCore", "VaultCrypto", "VaultJSON"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "VaultEnvelopeTests",
            dependencies: ["VaultEnvelope", "VaultCore", "VaultCrypto", "VaultJSON", "VaultWire", "VaultTestSupport"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(name: "VaultHTTPTests", dependencies: ["VaultHTTP"]),
        .testTarget(name: "VaultStorageTests", dependencies: ["VaultStorage", "VaultCore", "VaultWire", "VaultTestSupport"]),
        .testTarget(
            name: "VaultServerTests",
            dependencies: [
                "VaultServer", "VaultHTTP", "VaultStorage", "VaultCore", "VaultWire", "VaultCrypto", "VaultJSON", "VaultJOSE",
                "VaultTestSupport",
            ]
        ),
        .testTarget(
            name: "WalletVaultTests",
            dependencies: ["WalletVault", "VaultCore", "VaultEnvelope", "VaultJOSE", "VaultCrypto", "VaultJSON", "VaultTestSupport"]),
        .testTarget(
            name: "WalletVaultCLITests",
            dependencies: ["WalletVaultCLI", "WalletVault", "VaultCore", "VaultJSON", "VaultEnvelope", "VaultCrypto", "VaultWire"]),
        // The layering rule: no module imports one above it (read from the sources).
        .testTarget(name: "LayeringTests"),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
