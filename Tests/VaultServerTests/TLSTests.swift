import Foundation
import Testing
import VaultHTTP
import VaultServer
import VaultTestSupport

/// HTTPS served by walletvault-server itself (issue 20): RSA and ECDSA chains, the two profiles, and refused pairs.
/// scripts/tls_scan.sh scans the same server with sslyze against Mozilla's profiles.
@Suite("Direct TLS: certificates, chains, profiles, refused key pairs")
struct TLSTests {
    @Test(arguments: [TestPKI.Leaf.ecdsaP256, .ecdsaP384, .rsa2048])
    func servesAChainFileTrustedThroughItsIntermediate(leaf: TestPKI.Leaf) throws {
        let pki = try TestPKI.shared
        let files = try pki.issue(leaf)
        let server = try LiveServer(.init(extraConfig: ["tls": ["certificate_file": files.chain, "key_file": files.key]]))
        #expect(server.baseURL.scheme == "https")
        // Only the root is trusted: the handshake succeeds only if the server sends the intermediate too.
        let reply = try run(
            "/usr/bin/curl",
            [
                "-s", "--max-time", "10", "--cacert", pki.root,
                "https://127.0.0.1:\(server.port)/healthz",
            ])
        #expect(reply.status == 0, "\(reply.output)")
        #expect(reply.output.contains("\"ok\""))
        let twelve = try run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "--max-time", "10", "--cacert", pki.root,
                "--tlsv1.2", "--tls-max", "1.2", "https://127.0.0.1:\(server.port)/healthz",
            ])
        #expect(twelve.status == 0, "the intermediate profile serves TLS 1.2")
    }

    /// A body sent from its file (a kept older version, which the blob cache never holds) arrives byte for byte over
    /// TLS, where libmicrohttpd cannot `sendfile` and the transport reads the file in (issue 31).
    @Test func aBodyInItsFileArrivesWholeOverTLS() throws {
        let pki = try TestPKI.shared
        let files = try pki.issue(.ecdsaP256)
        let server = try LiveServer(.init(extraConfig: ["tls": ["certificate_file": files.chain, "key_file": files.key]]))
        try Self.expectKeptVersionArrivesWhole(from: server, base: "https://127.0.0.1:\(server.port)", curl: ["--cacert", pki.root])
    }

    /// On plain HTTP the same body goes out by `sendfile` on a corked socket, uncorked when the request completes:
    /// loaded three times on one kept-alive connection, each answer is whole and the next request is served.
    @Test func aBodyInItsFileArrivesWholeOnACorkedConnectionAgainAndAgain() throws {
        let server = try LiveServer()
        try Self.expectKeptVersionArrivesWhole(from: server, base: "http://127.0.0.1:\(server.port)", curl: [], times: 3)
    }

    /// Saves two versions through `curl` and loads the first (kept, so sent from its file) `times` times in one `curl`
    /// run, whose loads share a connection; expects its bytes each time.
    static func expectKeptVersionArrivesWhole(from server: LiveServer, base: String, curl options: [String], times: Int = 1)
        throws
    {
        func curl(_ arguments: [String]) throws -> String {
            let reply = try run("/usr/bin/curl", ["-s", "--max-time", "10"] + options + arguments)
            #expect(reply.status == 0, "\(reply.output)")
            return reply.output
        }
        func member(_ name: String, of json: String) -> String? {
            (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?[name] as? String
        }
        let minted = try curl([
            "-X", "POST", "-H", "Authorization: Bearer \(TestIssuer.shared.accessToken(sub: UUID().uuidString))",
            "\(base)/wallet-session-token.ashx",
        ])
        let token = try #require(member("access_token", of: minted), "\(minted)")
        let first = sampleBlob("first", cipherBytes: 48_000)
        var syncIDs: [String] = []
        for blob in [first, sampleBlob("second", cipherBytes: 48_000)] {
            let file = server.directory.appendingPathComponent("blob-\(syncIDs.count).json")
            try blob.write(to: file)
            let saved = try curl([
                "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                "--data-binary", "@\(file.path)", "\(base)/wallet-backup.ashx?action=save",
            ])
            syncIDs.append(try #require(member("sync_id", of: saved), "\(saved)"))
        }
        let url = "\(base)/wallet-backup.ashx?action=load&sync_id=\(syncIDs[0])"
        let loaded = try curl(["-H", "Authorization: Bearer \(token)"] + Array(repeating: url, count: times))
        #expect(loaded.utf8.count == first.count * times)
        #expect(Data(loaded.utf8) == Data(Array(repeating: first, count: times).joined()))
    }

    @Test func modernProfileRefusesTLS12() throws {
        let pki = try TestPKI.shared
        let files = try pki.issue(.ecdsaP256)
        let server = try LiveServer(
            .init(extraConfig: [
                "tls": ["certificate_file": files.chain, "key_file": files.key, "profile": "modern"]
            ]))
        let thirteen = try run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "--max-time", "10", "--cacert", pki.root,
                "--tlsv1.3", "https://127.0.0.1:\(server.port)/healthz",
            ])
        #expect(thirteen.status == 0)
        let twelve = try run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "--max-time", "10", "--cacert", pki.root,
                "--tlsv1.2", "--tls-max", "1.2", "https://127.0.0.1:\(server.port)/healthz",
            ])
        // 35: CURLE_SSL_CONNECT_ERROR, the handshake failed.
        #expect(twelve.status == 35)
    }

    @Test func profilesAreMozillasVersionsAndSuites() {
        let intermediate = TLSProfile.intermediate.gnutlsPriorities
        let modern = TLSProfile.modern.gnutlsPriorities
        #expect(intermediate.contains(":-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:"))
        #expect(modern.contains(":-VERS-ALL:+VERS-TLS1.3:") && !modern.contains("TLS1.2"))
        for priorities in [intermediate, modern] {
            #expect(priorities.hasPrefix("NORMAL:"))
            #expect(priorities.contains(":-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"))
            #expect(priorities.contains(":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1"))
            #expect(!priorities.contains("CCM") && !priorities.contains("CBC") && !priorities.contains(":+DHE-RSA"))
        }
    }

    /// A wrong pair stops startup with exit 2 and a message naming the key, before the database is created.
    @Test func badPairsStopStartupNamingTheKey() throws {
        let pki = try TestPKI.shared
        let ecdsa = try pki.issue(.ecdsaP256)
        let rsa = try pki.issue(.rsa2048)
        let directory = URL(fileURLWithPath: ScratchDirectory.path("tls-bad", suffix: "d"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func file(_ name: String, _ contents: Data) throws -> String {
            let url = directory.appendingPathComponent(name)
            try contents.write(to: url)
            return url.path
        }
        let leaf = try String(contentsOfFile: ecdsa.chain, encoding: .utf8)
        let firstCertificate = String(leaf[..<leaf.range(of: "-----END CERTIFICATE-----\n")!.upperBound])
        let intermediateOnly = try file("intermediate-only.pem", Data(leaf.dropFirst(firstCertificate.count).utf8))
        let garbled = try file("garbled.pem", Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8))
        let truncated = try file("truncated.pem", Data(leaf.prefix(300).utf8))
        let secondBad = try file(
            "second-bad.pem", Data((firstCertificate + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").utf8))
        let encrypted = directory.appendingPathComponent("encrypted.key").path
        #expect(
            try run("/usr/bin/openssl", ["pkey", "-in", ecdsa.key, "-aes256", "-passout", "pass:secret", "-out", encrypted]).status == 0)
        let der = directory.appendingPathComponent("key.der").path
        #expect(try run("/usr/bin/openssl", ["pkey", "-in", ecdsa.key, "-outform", "DER", "-out", der]).status == 0)

        let cases: [(certificate: String, key: String, profile: String?, expected: String)] = [
            (ecdsa.chain, rsa.key, nil, "config key tls.key_file: \(rsa.key) is not the private key of the first certificate"),
            (rsa.chain, ecdsa.key, nil, "config key tls.key_file: \(ecdsa.key) is not the private key of the first certificate"),
            (intermediateOnly, ecdsa.key, nil, "config key tls.key_file: \(ecdsa.key) is not the private key of the first certificate"),
            (ecdsa.chain, encrypted, nil, "config key tls.key_file: \(encrypted) is encrypted"),
            (ecdsa.chain, der, nil, "config key tls.key_file: \(der) is not PEM text"),
            (ecdsa.chain, ecdsa.chain, nil, "config key tls.key_file: no valid PEM private key in \(ecdsa.chain)"),
            (ecdsa.chain, directory.appendingPathComponent("absent.key").path, nil, "config key tls.key_file: cannot read"),
            (ecdsa.key, ecdsa.key, nil, "config key tls.certificate_file: no PEM certificate in \(ecdsa.key)"),
            (garbled, ecdsa.key, nil, "config key tls.certificate_file: certificate 1 in \(garbled) is not a valid X.509 certificate"),
            (truncated, ecdsa.key, nil, "config key tls.certificate_file: certificate 1 in \(truncated) is not a valid"),
            (secondBad, ecdsa.key, nil, "config key tls.certificate_file: certificate 2 in \(secondBad) is not a valid"),
            (ecdsa.chain, ecdsa.key, "old", #"key tls.profile: expected "intermediate" or "modern""#),
        ]
        for (index, entry) in cases.enumerated() {
            var tls: [String: Any] = ["certificate_file": entry.certificate, "key_file": entry.key]
            if let profile = entry.profile { tls["profile"] = profile }
            let database = directory.appendingPathComponent("vault-\(index).sqlite").path
            let config = try file("config-\(index).json", try TestPKI.configuration(database: database, tls: tls, in: directory))
            let result = try run(LiveServer.binary("walletvault-server").path, ["--config", config])
            #expect(result.status == 2, "\(entry.expected): \(result.output)")
            #expect(result.output.contains(entry.expected), "\(result.output)")
            #expect(!result.output.contains("BEGIN"), "no PEM text in the message")
            #expect(!FileManager.default.fileExists(atPath: database), "the store was opened before the TLS check")
        }
    }
}

/// A throwaway root and intermediate CA (made once per test process with openssl), issuing leaves for 127.0.0.1.
final class TestPKI: @unchecked Sendable {
    // @unchecked: the paths are set once in init; `issue` writes only files of its own.
    enum Leaf: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case ecdsaP256, ecdsaP384, rsa2048

        var keyArguments: [String] {
            switch self {
            case .ecdsaP256: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
            case .ecdsaP384: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384"]
            case .rsa2048: ["-newkey", "rsa:2048"]
            }
        }
        var testDescription: String { rawValue }
    }

    let directory: URL
    /// The root certificate: the only trust anchor clients are given.
    let root: String
    let intermediate: String
    let intermediateKey: String

    private static let made = Result { try TestPKI() }
    /// The process's one PKI.
    static var shared: TestPKI { get throws { try made.get() } }

    private init() throws {
        let base = URL(fileURLWithPath: ScratchDirectory.path("pki", suffix: "d"))
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        directory = base
        func path(_ name: String) -> String { base.appendingPathComponent(name).path }
        root = path("root.pem")
        intermediate = path("intermediate.pem")
        intermediateKey = path("intermediate.key")
        try Data("basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n".utf8)
            .write(to: URL(fileURLWithPath: path("intermediate.ext")))
        try Data(
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: path("leaf.ext")))
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("root.key"),
            "-out", root, "-days", "2", "-subj", "/CN=WalletVault test root",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try Self.openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", intermediateKey,
            "-out", path("intermediate.csr"), "-subj", "/CN=WalletVault test intermediate",
        ])
        try Self.openssl([
            "x509", "-req", "-in", path("intermediate.csr"), "-CA", root, "-CAkey", path("root.key"), "-CAcreateserial",
            "-days", "2", "-extfile", path("intermediate.ext"), "-out", intermediate,
        ])
    }

    /// A new leaf key and certificate; `chain` is the leaf followed by the intermediate.
    func issue(_ leaf: Leaf) throws -> (chain: String, key: String) {
        let name = "\(leaf.rawValue)-\(UUID().uuidString)"
        func path(_ suffix: String) -> String { directory.appendingPathComponent("\(name).\(suffix)").path }
        try Self.openssl(
            ["req", "-new"] + leaf.keyArguments + ["-nodes", "-keyout", path("key"), "-out", path("csr"), "-subj", "/CN=127.0.0.1"])
        try Self.openssl([
            "x509", "-req", "-in", path("csr"), "-CA", intermediate, "-CAkey", intermediateKey, "-CAcreateserial",
            "-days", "2", "-extfile", directory.appendingPathComponent("leaf.ext").path, "-out", path("pem"),
        ])
        var chain = try Data(contentsOf: URL(fileURLWithPath: path("pem")))
        chain.append(try Data(contentsOf: URL(fileURLWithPath: intermediate)))
        try chain.write(to: URL(fileURLWithPath: path("chain.pem")))
        return (path("chain.pem"), path("key"))
    }

    /// A configuration that starts (issuer keys by URL, never fetched at startup) with the given `tls` object.
    static func configuration(database: String, tls: [String: Any], in directory: URL) throws -> Data {
        let sessionKeys = directory.appendingPathComponent("session-keys.json")
        let pepper = directory.appendingPathComponent("pepper")
        if !FileManager.default.fileExists(atPath: pepper.path) {
            try LiveServer.Secrets.random().sessionKeys.write(to: sessionKeys)
            try LiveServer.Secrets.random().pepper.write(to: pepper)
        }
        let config: [String: Any] = [
            "listen": "127.0.0.1:0", "database": "sqlite:" + database,
            "issuers": [["issuer": "https://idp.invalid", "jwks_uri": "https://idp.invalid/jwks.json", "audiences": ["wallet-app"]]],
            "session_keys_file": sessionKeys.path, "storage_key_pepper_file": pepper.path, "tls": tls,
        ]
        return try JSONSerialization.data(withJSONObject: config)
    }

    struct OpenSSLFailed: Error { let output: String }

    private static func openssl(_ arguments: [String]) throws {
        let result = try run("/usr/bin/openssl", arguments)
        guard result.status == 0 else { throw OpenSSLFailed(output: result.output) }
    }
}
