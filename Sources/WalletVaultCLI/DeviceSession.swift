import Foundation
import VaultCore
import VaultJSON
import WalletVault

/// One command's view of a logged-in profile: the SDK's store, client and sync engine, wired to the profile's token source.
struct DeviceSession: Sendable {
    let home: ProfileHome
    let profile: Profile
    let store: LocalVaultStore
    let backup: BackupClient
    let engine: VaultSyncEngine
    let terminal: any Terminal
    private let tokenSource: TokenSource

    /// Opens the profile in `home`.
    ///
    /// - Throws: `CLIError` `.notAuthorized` without a profile, `.localStorage` for unreadable files.
    init(home: ProfileHome, terminal: any Terminal, conflictHandler: VaultSyncEngine.ConflictHandler? = nil) throws(CLIError) {
        self.home = home
        self.terminal = terminal
        profile = try home.loadProfile()
        guard let serverURL = profile.serverURL else {
            throw CLIError(.usage, "the profile's server URL \(profile.server) is not a URL: run `walletvault login --server URL`")
        }
        store = try home.store()
        let source = TokenSource(profile: profile)
        tokenSource = source
        let tokens = SessionTokenProvider(serverURL: serverURL, accessToken: { try await source.accessToken() })
        backup = BackupClient(serverURL: serverURL, tokens: tokens)
        do {
            engine = try VaultSyncEngine(store: store, backup: backup, deviceLabel: profile.label, conflictHandler: conflictHandler)
        } catch {
            throw CLIError.from(error)
        }
    }

    /// Runs an engine operation under a progress indicator, translating its error.
    func run<T>(_ label: String, _ body: (VaultSyncEngine) async throws(SyncError) -> T) async throws(CLIError) -> T {
        do {
            return try await ProgressIndicator.during(label, terminal: terminal) { () async throws(SyncError) -> T in
                try await body(engine)
            }
        } catch {
            throw translate(error)
        }
    }

    /// Fails when this device's key file exists but holds no usable key (the platform invalidated it).
    ///
    /// The engine notices a dead key only when it must open a new version; a device whose copy is current would
    /// otherwise report "up to date" while it can neither save nor read anything newer.
    /// - Throws: `CLIError` `.noAccess` naming `recover`.
    func requireUsableKey() throws(CLIError) {
        do { _ = try store.deviceKey() } catch { throw translate(error) }
    }

    /// The account's subject (`sub`), as the user knows it: the development account's name, or the OIDC token's claim.
    ///
    /// - Throws: `CLIError` `.notAuthorized` when no token can be had or it names no subject.
    func accountSubject() async throws(CLIError) -> String {
        if let sub = profile.auth.sub { return sub }
        let token: String
        do { token = try await tokenSource.accessToken() } catch {
            throw tokenSource.lastFailure ?? CLIError(.notAuthorized, "cannot get an OIDC token: run `walletvault login` again")
        }
        // Read for display only; the server verifies the token.
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])),
            let sub = (try? JSONParser().parse(payload))?["sub"]?.stringValue
        else { throw CLIError(.notAuthorized, "the OIDC token names no subject: check the token command in `walletvault status`") }
        return sub
    }

    /// The server's current blob, nil when none is stored.
    func loadBlob() async throws(CLIError) -> BackupClient.Snapshot? {
        do {
            switch try await ProgressIndicator.during(
                "Loading", terminal: terminal,
                { () async throws(BackupError) in
                    try await backup.load()
                })
            {
            case .blob(let snapshot): return snapshot
            case .notModified: return nil
            }
        } catch .notFound {
            return nil
        } catch {
            throw translate(SyncError(.server, "loading the vault failed", backupError: error))
        }
    }

    /// The SDK error as the user's next step; a refused login names the token source's own failure when there is one.
    func translate(_ error: SyncError) -> CLIError {
        if error.backupError == .unauthorized, let failure = tokenSource.lastFailure { return failure }
        return CLIError.from(error)
    }

    /// Throws for a rate-limited report; otherwise returns it.
    @discardableResult
    func requireSaved(_ report: SyncReport) throws(CLIError) -> SyncReport {
        guard case .rateLimited(let next) = report else { return report }
        throw CLIError(
            .rateLimited,
            "the server accepts no more saves until \(next.description): your changes are kept "
                + "here; run `walletvault sync` after that")
    }

    /// One line describing what a sync did.
    static func describe(_ report: SyncReport) -> String {
        switch report {
        case .upToDate: "Already up to date."
        case .created(let version): "Vault created on the server (version \(version))."
        case .pushed(let version): "Saved to the server (version \(version))."
        case .restored(let version): "Restored the server's vault (version \(version))."
        case .merged(let version, let conflicts):
            conflicts.isEmpty
                ? "Merged this device's and the server's changes (version \(version))."
                : "Merged; \(conflicts.joined(separator: ", ")) decided as chosen (version \(version))."
        case .rateLimited(let next): "Rate-limited until \(next.description); changes are kept here."
        case .rotated(let version, _): "Saved with a new data key (version \(version))."
        case .restoredVersion(let from, let version): "Restored the content of version \(from) as version \(version)."
        }
    }
}
