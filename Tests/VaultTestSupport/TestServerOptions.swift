import Foundation

/// How a test server is configured: what `LiveServer` writes into its config file and `InProcessServer` assembles.
public struct TestServerOptions: @unchecked Sendable {
    // @unchecked: `extraConfig` holds JSON values only.
    /// The `limits.max_blob_bytes` config value.
    public var maxBlobBytes: Int
    /// The `limits.saves_per_hour` config value.
    public var savesPerHour: Int
    /// Top-level config keys added or replaced (and `limits` members merged).
    public var extraConfig: [String: Any]
    /// The `database` config value; nil is a fresh SQLite file in the server's directory.
    public var database: String?
    /// The `history_versions` config value; nil leaves the server's default.
    public var historyVersions: Int?
    /// Session keys and pepper; give several servers the same ones to make them nodes of one service.
    public var secrets: TestServerSecrets

    /// Options as given; the defaults are 1 MiB blobs, 60 saves an hour, a fresh SQLite file, the default history.
    public init(
        maxBlobBytes: Int = 1_048_576, savesPerHour: Int = 60, extraConfig: [String: Any] = [:], database: String? = nil,
        historyVersions: Int? = nil, secrets: TestServerSecrets = .random()
    ) {
        self.maxBlobBytes = maxBlobBytes
        self.savesPerHour = savesPerHour
        self.extraConfig = extraConfig
        self.database = database
        self.historyVersions = historyVersions
        self.secrets = secrets
    }

    /// Writes the issuers' keys, the secrets and `config.json` into `directory`; returns the config file.
    public func writeConfiguration(in directory: URL) throws -> URL {
        try TestIssuer.shared.jwks.write(to: directory.appendingPathComponent("idp-jwks.json"))
        try TestIssuer.other.jwks.write(to: directory.appendingPathComponent("other-jwks.json"))
        try secrets.sessionKeys.write(to: directory.appendingPathComponent("session-keys.json"))
        try secrets.pepper.write(to: directory.appendingPathComponent("pepper"))
        var config: [String: Any] = [
            "listen": "127.0.0.1:0",
            "database": database ?? "sqlite:vault.sqlite",
            "issuers": [
                [
                    "issuer": TestIssuer.shared.issuer, "jwks_file": "idp-jwks.json", "audiences": [TestIssuer.shared.audience],
                    "allowed_azp": ["oem-a", "oem-b"],
                ],
                [
                    "issuer": TestIssuer.other.issuer, "jwks_file": "other-jwks.json", "audiences": [TestIssuer.other.audience],
                    "allowed_azp": ["oem-a"],
                ],
            ],
            "session_keys_file": "session-keys.json",
            "storage_key_pepper_file": "pepper",
            "limits": ["max_blob_bytes": maxBlobBytes, "saves_per_hour": savesPerHour],
        ]
        if let historyVersions { config["history_versions"] = historyVersions }
        for (key, value) in extraConfig {
            if key == "limits", let extra = value as? [String: Any], var limits = config["limits"] as? [String: Any] {
                limits.merge(extra) { _, new in new }
                config["limits"] = limits
            } else {
                config[key] = value
            }
        }
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)
        return configURL
    }
}
