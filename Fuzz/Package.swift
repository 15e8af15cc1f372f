// swift-tools-version:6.0
import PackageDescription

/// libFuzzer targets for WalletVault's parsers of untrusted input. Build only with the fuzzer flags:
///
///     swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
///
/// `scripts/fuzz_smoke.sh` builds them, seeds them from the test corpora and runs each one.
let package = Package(
    name: "WalletVaultFuzz",
    dependencies: [.package(name: "WalletVault", path: "..")],
    targets: [
        // The save body: JSON parser (duplicates, depth, UTF-8) then the vault shape rules.
        .executableTarget(
            name: "FuzzShape",
            dependencies: [
                .product(name: "VaultJSON", package: "WalletVault"), .product(name: "VaultCore", package: "WalletVault"),
            ]),
        // Any text: PortableJSONParser (the reader for platforms without yajl) held to JSONParser's yajl engine, and
        // PortableJSONSerializer to JSONSerializer (jansson) on what it reads.
        .executableTarget(
            name: "FuzzPortableJSON",
            dependencies: [
                .product(name: "VaultJSON", package: "WalletVault"), .product(name: "VaultCore", package: "WalletVault"),
            ]),
        // A bearer token: compact JWS parsing, signature check against fixed keys, then the claim rules.
        .executableTarget(
            name: "FuzzJWT",
            dependencies: [
                .product(name: "VaultJOSE", package: "WalletVault"), .product(name: "VaultJSON", package: "WalletVault"),
                .product(name: "VaultCore", package: "WalletVault"), .product(name: "VaultCrypto", package: "WalletVault"),
            ]),
        // A downloaded vault blob: the envelope reader, then opening it with a fixed A256KW key.
        .executableTarget(
            name: "FuzzEnvelope",
            dependencies: [
                .product(name: "VaultEnvelope", package: "WalletVault"), .product(name: "VaultCrypto", package: "WalletVault"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
