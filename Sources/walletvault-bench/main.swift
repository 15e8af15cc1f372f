import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultJOSE
@_spi(Engines) import VaultJSON
import VaultServer

/// Measures the envelope's hot paths for `scripts/bench_crypto.sh`, which sets them beside OpenSSL and argon2(1).
///
///     walletvault-bench vault BYTES SECONDS    seal and open of a BYTES-byte vault, JSON and base64url included
///     walletvault-bench open BYTES SECONDS     open alone, for profiling it (`perf record -g`)
///     walletvault-bench argon2 KIB T P RUNS    Argon2id of "password" with salt "saltsaltsaltsalt", median time
///     walletvault-bench sha256 COUNT           SHA-256 of a 400-byte token: through `Data`, and on the stack
///     walletvault-bench mint COUNT             the D1 exchange without HTTP: verify an RS256 access token (one
///                                              of 256 users, as scripts/bench.sh sends them) and mint a session
///                                              token, COUNT times; CPU seconds per exchange
///     walletvault-bench json BYTES SECONDS     parse of a BYTES-byte vault's blob: PortableJSONParser beside
///                                              JSONParser's yajl engine and its default (simdjson) engine; and
///                                              of 5,000 small objects, portable beside yajl
///
/// Output is `name value` lines: throughputs in bytes per second, times in seconds, the Argon2id output in hex so
/// the script can check it equals argon2(1)'s.
///
/// Time is the process's CPU time (user + system), as `openssl speed` (user time unless `-elapsed`) and argon2(1)
/// (`clock()`) measure theirs, so other load on a shared machine does not tilt the ratios.

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func measure(seconds: Double, _ body: () async throws -> Void) async rethrows -> Double {
    try await body()  // warm-up: page in the buffers, fill the caches
    var iterations = 0
    let start = cpuSeconds()
    while cpuSeconds() - start < seconds {
        try await body()
        iterations += 1
    }
    return Double(iterations) / (cpuSeconds() - start)
}

/// A sealed vault of `bytes` JSON-like bytes, with what seals and opens it.
struct BenchVault {
    let plaintext: Data
    let sealer: VaultSealer
    let opener: VaultOpener
    let key: AESGCMKEK
    let created: VaultSealer.SealedVault

    init(bytes: Int) async throws {
        // JSON-like contents rather than zeros; the cipher does not care, but this is what an SDK would seal.
        let item = Data(#"{"type":"PID","issuer":"https://issuer.example","claims":"0123456789abcdef"},"#.utf8)
        var plaintext = Data(capacity: bytes)
        while plaintext.count < bytes { plaintext.append(item) }
        self.plaintext = plaintext.prefix(bytes)
        let store = InMemoryCounterStore()
        // A 1 MiB vault is about 1.4 MB once base64url-encoded, above the server's default limit; measure it anyway.
        sealer = VaultSealer(counterStore: store, hint: "bench", maxBlobBytes: 4 * bytes + 65_536)
        opener = VaultOpener(counterStore: store, maxBlobBytes: 4 * bytes + 65_536)
        key = AESGCMKEK(key: SymmetricKey(size: .bits256))
        created = try await sealer.create(self.plaintext, vaultID: "bench", recipients: [.init(key, label: "bench")])
    }

    /// Opens per second of `blob`, measured for `seconds`.
    func opensPerSecond(_ blob: Data, seconds: Double) async throws -> Double {
        try await measure(seconds: seconds) {
            guard try await opener.open(blob, vaultID: "bench", keys: [key]).plaintext.count == plaintext.count else {
                fatalError("bad open")
            }
        }
    }
}

func vault(bytes: Int, seconds: Double) async throws {
    let vault = try await BenchVault(bytes: bytes)
    var blob = vault.created.blob
    let sealsPerSecond = try await measure(seconds: seconds) {
        blob = try await vault.sealer.seal(vault.plaintext, over: vault.created.state).blob
    }
    let opensPerSecond = try await vault.opensPerSecond(blob, seconds: seconds)
    print("blob_bytes \(blob.count)")
    print("seal_bytes_per_second \(sealsPerSecond * Double(bytes))")
    print("open_bytes_per_second \(opensPerSecond * Double(bytes))")
}

func open(bytes: Int, seconds: Double) async throws {
    let vault = try await BenchVault(bytes: bytes)
    let opensPerSecond = try await vault.opensPerSecond(vault.created.blob, seconds: seconds)
    print("open_bytes_per_second \(opensPerSecond * Double(bytes))")
}

/// Seconds per parse of a sealed vault's blob, whole and with `cipher` decoded while reading, by each parser: the
/// portable one has to stay near yajl's speed for an SDK without yajl to open a vault as fast.
func json(bytes: Int, seconds: Double) async throws {
    let blob = try await BenchVault(bytes: bytes).created.blob
    var yajl = JSONParser()
    yajl.engine = .yajl
    let portable = PortableJSONParser()
    let entry =
        #"{"kek_id":"pRfPPsrJb2SMtov6-iv0dA","dek_cipher":"78MqtTUGFT5e6MF4rdzeIAQ4b0UvewUnooZyZrV7P0E","alg":"A256GCMKW","#
        + #""n":1234567,"x":-1.5e-3,"label":"caf\u00e9 \"x\"\n","created":"2026-08-12T19:00:06.000Z","ok":true,"none":null}"#
    let objects = Data(("[" + Array(repeating: entry, count: 5000).joined(separator: ",") + "]").utf8)
    print("blob_bytes \(blob.count)")
    print("objects_bytes \(objects.count)")
    let cases: [(String, () throws -> Void)] = [
        ("portable_parse", { _ = try portable.parse(blob) }),
        ("yajl_parse", { _ = try yajl.parse(blob) }),
        ("portable_parse_decoding_cipher", { _ = try portable.parse(blob, decodingBase64URLMember: "cipher") }),
        ("yajl_parse_decoding_cipher", { _ = try yajl.parse(blob, decodingBase64URLMember: "cipher") }),
        ("default_parse_decoding_cipher", { _ = try JSONParser().parse(blob, decodingBase64URLMember: "cipher") }),
        // Structure rather than one long string: 5,000 wrapped-key-like objects, about 1.1 MB.
        ("portable_parse_5000_objects", { _ = try portable.parse(objects) }),
        ("yajl_parse_5000_objects", { _ = try yajl.parse(objects) }),
    ]
    for (name, parse) in cases {
        print("\(name)_seconds \(1 / (try await measure(seconds: seconds) { try parse() }))")
    }
}

func sha256(count: Int) {
    var token = String(repeating: "eyJhbGciOiJIUzI1NiJ9", count: 20)
    var sink = 0
    var start = cpuSeconds()
    for _ in 0..<count { sink &+= Int(SHA256.hash(data: Data(token.utf8))[0]) }
    print("sha256_data_seconds_per_call \((cpuSeconds() - start) / Double(count))")
    start = cpuSeconds()
    for _ in 0..<count { sink &+= token.withUTF8 { SHA256.withDigest(of: UnsafeRawBufferPointer($0)) { Int($0[0]) } } }
    print("sha256_stack_seconds_per_call \((cpuSeconds() - start) / Double(count))")
    if sink == 42 { print("") }  // keeps the loops from being optimized away
}

func argon2(memoryKiB: Int, iterations: Int, parallelism: Int, runs: Int) throws {
    var times: [Double] = []
    var output = ""
    for _ in 0..<runs {
        let start = cpuSeconds()
        let key = try Argon2id.deriveKey(
            password: Data("password".utf8), salt: Data("saltsaltsaltsalt".utf8), iterations: iterations,
            memoryKiB: memoryKiB, parallelism: parallelism, outputByteCount: 32)
        times.append(cpuSeconds() - start)
        output = key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }
    print("argon2_seconds \(times.sorted()[times.count / 2])")
    print("argon2_hash \(output)")
}

/// The D1 exchange as `SessionTokenEndpoint` runs it, without HTTP: `OIDCTokenVerifier.verify`, then
/// `SessionTokenService.mint`, for `count` tokens of 256 users.
func mint(count: Int) throws {
    let issuer = "urn:walletvault:bench-oidc"
    let signing = try RSA.Signing.PrivateKey(keySize: 2048)
    let signer = JWSSigner(keyID: "bench-rs256", key: .rsa(signing, .rs256))
    let keys = JSONWebKeySet(keys: [JSONWebKey(keyID: signer.keyID, material: .rsa(signing.publicKey), algorithm: .rs256)])
    let verifier = OIDCTokenVerifier(issuers: [
        .init(rules: JWTClaimsRules(issuer: issuer, audiences: ["bench"]), keys: JWKSSource(keys: keys))
    ])
    let sessions = try SessionTokenService(
        issuer: "urn:walletvault:bench", keys: [.init(keyID: "s1", secret: Data(repeating: 7, count: 32))], oidcIssuers: [issuer])
    let now = UTCTimestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000))
    let issuedAt = now.millisecondsSinceEpoch / 1000
    let tokens = try (0..<256).map { user in
        try signer.sign(
            payload: JSONSerializer.data(
                of: .object([
                    ("aud", .string("bench")), ("azp", .string("bench-wallet")), ("client_id", .string("bench-wallet")),
                    ("exp", .integer(issuedAt + 3600)), ("iat", .integer(issuedAt)), ("iss", .string(issuer)),
                    ("jti", .string(Base64URL.encode(SecureRandom.bytes(count: 16)))), ("scope", .string("openid")),
                    ("sub", .string("mint-\(user)")),
                ])), type: "at+jwt")
    }
    var sink = 0
    for token in tokens { sink &+= try sessions.mint(for: try verifier.verify(token, now: now), now: now).utf8.count }
    let start = cpuSeconds()
    for index in 0..<count {
        sink &+= try sessions.mint(for: try verifier.verify(tokens[index % tokens.count], now: now), now: now).utf8.count
    }
    print("mint_seconds_per_call \((cpuSeconds() - start) / Double(count))")
    if sink == 42 { print("") }
}

let arguments = CommandLine.arguments.dropFirst()
switch (arguments.first, arguments.dropFirst().compactMap(Double.init)) {
case ("vault"?, let numbers) where numbers.count == 2:
    try await vault(bytes: Int(numbers[0]), seconds: numbers[1])
case ("open"?, let numbers) where numbers.count == 2:
    try await open(bytes: Int(numbers[0]), seconds: numbers[1])
case ("json"?, let numbers) where numbers.count == 2:
    try await json(bytes: Int(numbers[0]), seconds: numbers[1])
case ("mint"?, let numbers) where numbers.count == 1:
    try mint(count: Int(numbers[0]))
case ("sha256"?, let numbers) where numbers.count == 1:
    sha256(count: Int(numbers[0]))
case ("argon2"?, let numbers) where numbers.count == 4:
    try argon2(memoryKiB: Int(numbers[0]), iterations: Int(numbers[1]), parallelism: Int(numbers[2]), runs: Int(numbers[3]))
default:
    FileHandle.standardError.write(
        Data(
            "usage: walletvault-bench vault BYTES SECONDS | open BYTES SECONDS | json BYTES SECONDS | argon2 KIB T P RUNS | sha256 COUNT | mint COUNT\n"
                .utf8))
    exit(2)
}
