import Foundation
import VaultCore
import VaultCrypto
import VaultServer

/// What `walletvault-server --dev` runs: the development issuer beside a configuration that needs no files.
public enum DevelopmentServer {
    /// The `--dev` configuration: loopback, SQLite and secrets under `dataDirectory`, generated once (mode 0600).
    ///
    /// - Throws: `ServerStartupError` when the directory or a secret cannot be written or read.
    public static func configuration(dataDirectory: String, listen: String, clock: any ServerClock = SystemClock())
        throws(ServerStartupError) -> (ServerConfiguration, DevOIDCProvider)
    {
        let files = FileManager.default
        do {
            try files.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerStartupError("cannot create data directory \(dataDirectory)")
        }
        func secret(_ name: String, make: () throws -> Data) throws(ServerStartupError) -> String {
            let path = URL(fileURLWithPath: dataDirectory).appendingPathComponent(name).path
            if !files.fileExists(atPath: path) {
                guard let contents = try? make(), files.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600])
                else { throw ServerStartupError("cannot write \(path)") }
            }
            return path
        }
        let sessionKeys = try secret("session-keys.json") {
            Data("[{\"kid\":\"dev-1\",\"secret\":\"\(Base64URL.encode(SecureRandom.bytes(count: 32)))\"}]".utf8)
        }
        let pepper = try secret("storage-key-pepper") { SecureRandom.bytes(count: 32) }
        let devKeyPath = try secret("dev-oidc-rs256.pem") { Data(try RSA.Signing.PrivateKey(keySize: 2048).pemRepresentation.utf8) }
        guard let pem = try? String(contentsOfFile: devKeyPath, encoding: .utf8),
            let devKey = try? RSA.Signing.PrivateKey(pemRepresentation: pem)
        else { throw ServerStartupError("cannot read the development signing key \(devKeyPath)") }
        let database = "sqlite:" + URL(fileURLWithPath: dataDirectory).appendingPathComponent("vault.sqlite").path
        let configuration = ServerConfiguration(
            listen: listen, database: database, issuers: [], sessionKeysFile: sessionKeys,
            storageKeyPepperFile: pepper, sessionIssuer: "walletvault-dev")
        guard (try? configuration.listenAddress())?.host.hasPrefix("127.") == true else {
            throw ServerStartupError("--dev listens on loopback only (127.0.0.0/8)")
        }
        return (configuration, DevOIDCProvider(signingKey: devKey, clock: clock))
    }
}
