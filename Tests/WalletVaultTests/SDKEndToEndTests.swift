import Foundation
import Synchronization
import Testing
import VaultCore
import VaultEnvelope
import VaultJSON
import VaultTestSupport
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A device: its own profile directory, session, client and engine, against a live or an in-process server.
struct SimulatedDevice {
    let engine: VaultSyncEngine
    let backup: BackupClient
    let tokens: SessionTokenProvider
    let directory: URL

    init(
        server: LiveServer, user: String, label: String, directory: URL? = nil, transport: any HTTPTransport = URLSessionTransport(),
        maxBlobBytes: Int = 1_048_576, conflictHandler: VaultSyncEngine.ConflictHandler? = nil
    ) throws {
        try self.init(
            baseURL: server.baseURL, user: user, label: label, directory: directory, transport: transport,
            maxBlobBytes: maxBlobBytes, conflictHandler: conflictHandler)
    }

    init(
        server: InProcessServer, user: String, label: String, directory: URL? = nil, gate: RequestGate? = nil,
        maxBlobBytes: Int = 1_048_576, conflictHandler: VaultSyncEngine.ConflictHandler? = nil,
        keychain: (any PlatformKeychain)? = nil, syncedKeys: (any SyncedKeyStore)? = nil
    ) throws {
        try self.init(
            baseURL: server.baseURL, user: user, label: label, directory: directory, transport: server.transport(gate: gate),
            maxBlobBytes: maxBlobBytes, conflictHandler: conflictHandler, keychain: keychain, syncedKeys: syncedKeys)
    }

    /// The device's engine waits on `clock`; its client makes `attempts` tries of each request.
    init(
        baseURL: URL, user: String, label: String, directory: URL?, transport: any HTTPTransport,
        maxBlobBytes: Int = 1_048_576, conflictHandler: VaultSyncEngine.ConflictHandler?, keychain: (any PlatformKeychain)? = nil,
        syncedKeys: (any SyncedKeyStore)? = nil, clock: any WalletClock = SystemWalletClock(), attempts: Int = 2
    ) throws {
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        tokens = SessionTokenProvider(
            serverURL: baseURL, accessToken: { TestIssuer.shared.accessToken(sub: user) },
            transport: transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelaySeconds: 0.01))
        backup = BackupClient(
            serverURL: baseURL, tokens: tokens, transport: transport,
            retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelaySeconds: 0.01))
        let store = try LocalVaultStore(directory: self.directory)
        engine = try VaultSyncEngine(
            store: store, deviceKeys: keychain.map { PlatformDeviceKeyStore(keychain: $0, profile: store) },
            backup: backup, deviceLabel: label, maxBlobBytes: maxBlobBytes, conflictHandler: conflictHandler,
            clock: clock, syncedRecoveryKey: syncedKeys.map { SyncedRecoveryKey(store: $0) })
    }

    func set(_ id: String, _ value: String) async throws {
        try await engine.edit { document, now in document.set(id, to: .string(value), at: now) }
    }

    func values() async throws -> [String: JSONValue] {
        try await engine.document()?.liveValues ?? [:]
    }
}

/// Records the conflicts a handler was asked about and answers with a fixed choice.
final class RecordingConflictHandler: Sendable {
    private let asked = Mutex<[[String]]>([])
    let answer: ConflictResolution

    init(answer: ConflictResolution) {
        self.answer = answer
    }

    var questions: [[String]] { asked.withLock { $0 } }

    var handler: VaultSyncEngine.ConflictHandler {
        { context in
            self.asked.withLock { $0.append(context.conflictingItems) }
            return self.answer
        }
    }
}

/// The SDK against the server in process; `twoDevicesRestoreMergeAndAskOnlyForRealConflicts` goes over a real socket with
/// URLSession, so the SDK's own HTTP stays covered.
@Suite("SDK end to end")
struct SDKEndToEndTests {
    func metric(_ server: any WalletVaultAPI, _ name: String) async throws -> Int {
        let text = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ").last!) } ?? 0
    }

    @Test func twoDevicesRestoreMergeAndAskOnlyForRealConflicts() async throws {
        let server = try LiveServer()
        let user = UUID().uuidString
        let code = RecoveryCode.generate()
        let a = try SimulatedDevice(server: server, user: user, label: "Device A")
        let askB = RecordingConflictHandler(answer: .keepLocal)
        let b = try SimulatedDevice(server: server, user: user, label: "Device B", conflictHandler: askB.handler)

        // A creates the vault; B pairs and restores.
        #expect(try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: code), "recovery code")]).version != nil)
        try await a.set("passport", "P1")
        #expect(try await a.engine.sync().version != nil)
        await requireError(.noAccess) { _ = try await b.engine.sync() }
        let request = try await b.engine.pairingRequest()
        let received = try PairingRequest(encoded: request.encoded)
        #expect(received.shortAuthenticationString == request.shortAuthenticationString)
        _ = try await a.engine.approve(received)
        // Approved, B can open the vault but cannot know who wrote it until it is given A's confirmation code.
        await requireError(.confirmationRequired) { _ = try await b.engine.sync() }
        let pairingCode = try await a.engine.confirmationCode(for: received)
        let wrong = String(pairingCode.map { $0 == "0" ? "1" : $0 == " " ? " " : "0" })
        await requireError(.confirmationMismatch) { _ = try await b.engine.confirmPairing(code: wrong) }
        guard case .restored = try await b.engine.confirmPairing(code: pairingCode) else {
            Issue.record("B should restore")
            return
        }
        #expect(try await b.values() == ["passport": .string("P1")])

        // An edit on A reaches B silently.
        try await a.set("license", "L1")
        _ = try await a.engine.sync()
        guard case .restored = try await b.engine.sync() else {
            Issue.record("B should restore A's edit")
            return
        }
        #expect(try await b.values()["license"] == .string("L1"))

        // Edits to different items merge without asking.
        try await a.set("a-only", "A")
        try await b.set("b-only", "B")
        _ = try await a.engine.sync()
        guard case .merged(_, let conflicts) = try await b.engine.sync() else {
            Issue.record("B should merge")
            return
        }
        #expect(conflicts.isEmpty)
        #expect(askB.questions.isEmpty)
        _ = try await a.engine.sync()
        #expect(try await a.values() == b.values())
        #expect(try await a.values()["a-only"] == .string("A"))
        #expect(try await a.values()["b-only"] == .string("B"))

        // Edits to the same item reach the conflict handler.
        try await a.set("passport", "from A")
        try await b.set("passport", "from B")
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        #expect(askB.questions == [["passport"]])
        _ = try await a.engine.sync()
        #expect(try await a.values()["passport"] == .string("from B"))

        // Without a handler the conflict surfaces and nothing is overwritten.
        let c = try SimulatedDevice(server: server, user: user, label: "Device C", directory: a.directory)
        try await a.set("passport", "A again")
        try await b.set("passport", "B again")
        _ = try await b.engine.sync()
        await requireError(.unresolvedConflict) { _ = try await c.engine.sync() }
        #expect(try await c.values()["passport"] == .string("A again"))
    }

    @Test func racingSavesLoseNoEdit() async throws {
        let server = try InProcessServer(TestServerOptions())
        let user = UUID().uuidString
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await a.engine.createVault()
        _ = try await a.engine.pairAndConfirm(b.engine)
        for round in 0..<3 {
            try await a.set("a\(round)", "A")
            try await b.set("b\(round)", "B")
            async let first = a.engine.sync()
            async let second = b.engine.sync()
            _ = try await (first, second)
        }
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        let expected = Dictionary(uniqueKeysWithValues: (0..<3).flatMap { [("a\($0)", JSONValue.string("A")), ("b\($0)", .string("B"))] })
        let (aValues, bValues) = (try await a.values(), try await b.values())
        #expect(aValues == expected, "\(aValues)")
        #expect(bValues == expected, "\(bValues)")
        #expect(try await metric(server, "walletvault_conflicts_total") >= 1, "the race produced a 409 that was merged")
    }

    @Test func oneSessionExchangeForManyRequestsAndOneRefreshAfterRevocation() async throws {
        let server = try InProcessServer(TestServerOptions())
        let revoking = RevokingTransport(inner: server.transport())
        let device = try SimulatedDevice(
            baseURL: server.baseURL, user: UUID().uuidString, label: "A", directory: nil, transport: revoking,
            conflictHandler: nil)
        _ = try await device.engine.createVault()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { _ = try? await device.backup.load() } }
            try await group.waitForAll()
        }
        #expect(await device.tokens.exchangeCount == 1)
        revoking.revokeNext()
        _ = try await device.backup.load()
        #expect(await device.tokens.exchangeCount == 2)
    }

    @Test func rateLimitIsHonouredWithoutHammering() async throws {
        let server = try InProcessServer(TestServerOptions(savesPerHour: 2))
        let device = try SimulatedDevice(server: server, user: UUID().uuidString, label: "A")
        _ = try await device.engine.createVault()
        try await device.set("x", "1")
        _ = try await device.engine.sync()
        try await device.set("x", "2")
        guard case .rateLimited(let next) = try await device.engine.sync() else {
            Issue.record("expected 429")
            return
        }
        #expect(next.millisecondsSinceEpoch > Int64(Date().timeIntervalSince1970 * 1000) + 3_000_000)
        for _ in 0..<5 {
            guard case .rateLimited = try await device.engine.sync() else {
                Issue.record("still limited")
                return
            }
        }
        #expect(try await metric(server, "walletvault_rate_limited_saves_total") == 1, "later syncs wait instead of retrying")
        #expect(try await device.values()["x"] == .string("2"), "the local copy stays authoritative")
    }

    /// The create reaches the server and its answer is lost, once (the client's resend gets the 409 of
    /// `If-None-Match: *`) or on every attempt.
    @Test(arguments: [1, 2])
    func aCreateWhoseAnswerWasLostLeavesAVaultItsCreatorReads(answersLost: Int) async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let lossy = ScriptedAnswers(server.transport())
        let a = try SimulatedDevice(baseURL: server.baseURL, user: user, label: "A", directory: nil, transport: lossy, conflictHandler: nil)
        lossy.play(Array(repeating: .answerLost, count: answersLost), to: .saves)
        let report = try await a.engine.createVault()
        guard case .blob(let stored) = try await a.backup.load() else {
            Issue.record("nothing stored")
            return
        }
        #expect(report == .created(version: stored.syncID))
        try await expectItsCreatorSavesAndPairs(a, on: server, user: user)
    }

    /// That `creator` saves over the vault it created and pairs another device, which reads the save.
    func expectItsCreatorSavesAndPairs(_ creator: SimulatedDevice, on server: InProcessServer, user: String) async throws {
        try await creator.set("passport", "P1")
        guard case .pushed = try await creator.engine.sync() else {
            Issue.record("the creator cannot save over its own vault")
            return
        }
        let other = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await creator.engine.pairAndConfirm(other.engine)
        #expect(try await other.values() == ["passport": .string("P1")])
    }

    /// The create reaches the server and its answer is lost, and so is the load that would have shown the vault to be
    /// the one sent (each of the client's two attempts at both): the create fails, and trying it again, or a sync,
    /// adopts the vault of the first attempt (the exact bytes this device sent, which it kept). Before, the retry met a
    /// conflict with its own vault and the sync could not open it (no anchor pinned): no device could, without a
    /// recovery code.
    @Test(arguments: [false, true])
    func aCreateWhoseAnswerAndCheckWereLostIsAdoptedWhenTriedAgain(bySyncing: Bool) async throws {
        let (server, user, _, a) = try await deviceWhoseCreateFailed(saves: [.answerLost])
        guard case .blob(let first) = try await a.backup.load() else {
            Issue.record("the first attempt stored nothing")
            return
        }
        if bySyncing {
            #expect(try await a.engine.sync() == .upToDate(version: first.syncID))
        } else {
            #expect(try await a.engine.createVault() == .created(version: first.syncID))
        }
        guard case .blob(let stored) = try await a.backup.load() else {
            Issue.record("nothing stored")
            return
        }
        #expect(stored.blob == first.blob, "the retry stored a second vault")
        try await expectItsCreatorSavesAndPairs(a, on: server, user: user)
    }

    /// A retry that passes another recovery code than the attempt it adopts is told so (the vault is created, without
    /// that code), and the code replaces the first one through `replaceRecoveryPaths`; the same code is no error.
    @Test(arguments: [false, true])
    func aRetryWithOtherRecoveryPathsIsToldTheAdoptedVaultLacksThem(sameCode: Bool) async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let lossy = ScriptedAnswers(server.transport())
        let a = try SimulatedDevice(baseURL: server.baseURL, user: user, label: "A", directory: nil, transport: lossy, conflictHandler: nil)
        let code = RecoveryCode.generate()
        let first = try RecoveryCodeKEK(code: code)
        let retried = try RecoveryCodeKEK(code: sameCode ? code : RecoveryCode.generate())
        lossy.play([.answerLost], to: .saves)
        lossy.play([.networkError, .networkError], to: .loads)
        await requireError(.server) { _ = try await a.engine.createVault(recoveryPaths: [(first, "Recovery code")]) }
        guard !sameCode else {
            guard case .created = try await a.engine.createVault(recoveryPaths: [(retried, "Recovery code")]) else {
                Issue.record("the retry with the same code was not taken as the create")
                return
            }
            return
        }
        await requireError(.invalidInput) { _ = try await a.engine.createVault(recoveryPaths: [(retried, "Recovery code")]) }
        #expect(try await a.engine.devices().contains { $0.kekID == first.kekID })
        _ = try await a.engine.replaceRecoveryPaths(with: [(retried, "Recovery code")])
        let kekIDs = try await a.engine.devices().map(\.kekID)
        #expect(kekIDs.contains(retried.kekID) && !kekIDs.contains(first.kekID))
    }

    /// A pending create the server holds but that this device cannot adopt for a reason retrying does not cure (here
    /// another device's vault, which opens for none of this device's keys) is forgotten once it failed, so that it does
    /// not fail every sync from then on.
    @Test func aPendingCreateThatCannotBeAdoptedIsForgotten() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        _ = try await a.engine.createVault()
        guard case .blob(let stored) = try await a.backup.load() else {
            Issue.record("nothing stored")
            return
        }
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        // Gives B a key; its own create meets A's vault.
        await requireError(.server) { _ = try await b.engine.createVault() }
        try LocalVaultStore(directory: b.directory).savePendingCreate(stored.blob)
        await requireError(.noAccess) { _ = try await b.engine.sync() }
        #expect(try LocalVaultStore(directory: b.directory).pendingCreate() == nil)
    }

    /// A pending create the server does not hold (its request never arrived, or has not yet: a client that gave up on
    /// a slow server) is sent again as it was, not as a new vault, so whichever lands is this device's own; one where
    /// another vault is stored gives way, and the create meets the conflict.
    @Test func aPendingCreateTheServerDoesNotHoldIsSentAgainAsItWas() async throws {
        let (server, user, lossy, a) = try await deviceWhoseCreateFailed(saves: [.networkError, .networkError])
        let pending = try LocalVaultStore(directory: a.directory).pendingCreate()
        guard case .created(let version) = try await a.engine.createVault() else {
            Issue.record("no create")
            return
        }
        guard case .blob(let stored) = try await a.backup.load() else {
            Issue.record("nothing stored")
            return
        }
        #expect(stored.syncID == version)
        #expect(pending != nil && stored.blob == pending, "a new vault was sealed instead of the pending one")
        let b = try SimulatedDevice(baseURL: server.baseURL, user: user, label: "B", directory: nil, transport: lossy, conflictHandler: nil)
        lossy.play([.answerLost], to: .saves)
        lossy.play([.networkError, .networkError], to: .loads)
        await requireError(.server) { _ = try await b.engine.createVault() }
        await expectConflict("B adopted A's vault") { () async throws(SyncError) in _ = try await b.engine.createVault() }
    }

    /// A pending create the server did not hold when asked, whose first attempt lands just before the resend (a slow
    /// proxy that let it through late): the resend meets that attempt's 409, and the vault is adopted as this device's
    /// own, because the server holds exactly its bytes.
    @Test func aResendOfAPendingCreateThatMeetsItsFirstAttemptAdoptsIt() async throws {
        let (server, user, lossy, a) = try await deviceWhoseCreateFailed(saves: [.held, .networkError])
        let pending = try LocalVaultStore(directory: a.directory).pendingCreate()
        do throws(BackupError) {
            _ = try await a.backup.load()
            Issue.record("the held attempt reached the server early")
        } catch .notFound {}
        lossy.play([.releasingHeld], to: .saves)
        let report = try await a.engine.createVault()
        guard case .blob(let stored) = try await a.backup.load() else {
            Issue.record("nothing stored")
            return
        }
        #expect(report == .created(version: stored.syncID))
        #expect(pending != nil && stored.blob == pending, "the first attempt's bytes are not what the server holds")
        #expect(try LocalVaultStore(directory: a.directory).pendingCreate() == nil, "the adopted create is still pending")
        try await expectItsCreatorSavesAndPairs(a, on: server, user: user)
    }

    /// A device whose own create never landed and that then joins another device's vault by pairing gives its pending
    /// create up: confirming restores that vault, and does not fail on the pending create (of another vault than the
    /// one just pinned) as it did before.
    @Test func pairingIntoAnotherVaultGivesUpAPendingCreate() async throws {
        let (server, user, _, a) = try await deviceWhoseCreateFailed(saves: [.networkError, .networkError])
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await b.engine.createVault()
        try await b.set("passport", "P1")
        _ = try await b.engine.sync()
        guard case .restored = try await b.engine.pairAndConfirm(a.engine) else {
            Issue.record("the pairing did not restore B's vault")
            return
        }
        #expect(try await a.values() == ["passport": .string("P1")])
        #expect(try LocalVaultStore(directory: a.directory).pendingCreate() == nil, "the pending create is still kept")
        #expect(try await a.engine.sync() == .upToDate(version: try #require(await b.engine.status().syncedVersion)))
    }

    /// The same when the device joins by recovering with another device's recovery code: its next sync is up to
    /// date, not `.tampered` on the pending create as before.
    @Test func recoveringAnotherVaultGivesUpAPendingCreate() async throws {
        let (server, user, _, a) = try await deviceWhoseCreateFailed(saves: [.networkError, .networkError])
        let code = RecoveryCode.generate()
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await b.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: code), "Recovery code")])
        guard case .restored(let version) = try await a.engine.recover(with: try RecoveryCodeKEK(code: code)) else {
            Issue.record("the recovery did not restore B's vault")
            return
        }
        #expect(try LocalVaultStore(directory: a.directory).pendingCreate() == nil, "the pending create is still kept")
        #expect(try await a.engine.sync() == .upToDate(version: version))
    }

    /// A device on a fresh server whose create fails: its saves get `saves`, and both attempts at the load that would
    /// check what the server stored fail too, so the create stays pending on the device.
    func deviceWhoseCreateFailed(saves: [ScriptedAnswers.Outcome]) async throws
        -> (server: InProcessServer, user: String, lossy: ScriptedAnswers, device: SimulatedDevice)
    {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let lossy = ScriptedAnswers(server.transport())
        let device = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "A", directory: nil, transport: lossy, conflictHandler: nil)
        lossy.play(saves, to: .saves)
        lossy.play([.networkError, .networkError], to: .loads)
        await requireError(.server) { _ = try await device.engine.createVault() }
        return (server, user, lossy, device)
    }

    /// Devices A and B (and C when `withThirdDevice`) of one vault, A's edit `z` pending in the hourly cap's pause: its
    /// last sync met a 429 with two minutes to wait.
    ///
    /// - Throws: when A's sync did not meet the cap (a failed `#require`), and what the devices' set-up throws.
    func devicesWithAInTheCapsPause(withThirdDevice: Bool = false) async throws
        -> (a: SimulatedDevice, b: SimulatedDevice, c: SimulatedDevice?)
    {
        let (a, b, c, limited) = try await pairedDevicesWithScriptedAnswersForA(withThirdDevice: withThirdDevice)
        try await a.set("z", "from A")
        limited.play([.rateLimited(retryAfter: 120)], to: .saves)
        let report = try await a.engine.sync()
        let metTheCap = if case .rateLimited = report { true } else { false }
        try #require(metTheCap, "A's sync did not meet the cap: \(report)")
        return (a, b, c)
    }

    /// Devices A and B (and C when `withThirdDevice`) of one synced vault; A's requests go through `limited`, which
    /// answers what a test plays to it.
    ///
    /// - Throws: what the devices' set-up throws.
    func pairedDevicesWithScriptedAnswersForA(withThirdDevice: Bool = false) async throws
        -> (a: SimulatedDevice, b: SimulatedDevice, c: SimulatedDevice?, limited: ScriptedAnswers)
    {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let limited = ScriptedAnswers(server.transport())
        let a = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "A", directory: nil, transport: limited, conflictHandler: nil)
        _ = try await a.engine.createVault()
        try await a.set("x", "1")
        _ = try await a.engine.sync()
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await a.engine.pairAndConfirm(b.engine)
        let c = withThirdDevice ? try SimulatedDevice(server: server, user: user, label: "C") : nil
        if let c { _ = try await a.engine.pairAndConfirm(c.engine) }
        return (a, b, c, limited)
    }

    /// Records an issue unless `body` throws a `SyncError` carrying the server's 409 (`.conflict`); `otherwise` names
    /// what its success would mean.
    func expectConflict(_ otherwise: String, _ body: () async throws(SyncError) -> Void) async {
        do throws(SyncError) {
            try await body()
            Issue.record(Comment(rawValue: otherwise))
        } catch {
            guard case .conflict? = error.backupError else {
                Issue.record("expected a conflict, got \(error)")
                return
            }
        }
    }

    @Test func aCreateOverAnotherDevicesVaultIsStillAConflict() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        let lossy = ScriptedAnswers(server.transport())
        let b = try SimulatedDevice(baseURL: server.baseURL, user: user, label: "B", directory: nil, transport: lossy, conflictHandler: nil)
        _ = try await a.engine.createVault()
        lossy.play([.networkError], to: .saves)
        await expectConflict("B created a second vault") { () async throws(SyncError) in _ = try await b.engine.createVault() }
        #expect(try await b.engine.document() == nil)
    }

    @Test func oversizeVaultIsRefusedBeforeUpload() async throws {
        let server = try InProcessServer(TestServerOptions())
        let device = try SimulatedDevice(server: server, user: UUID().uuidString, label: "A", maxBlobBytes: 4096)
        _ = try await device.engine.createVault()
        let bytesBefore = try await metric(server, "walletvault_http_request_bytes_total")
        try await device.set("photo", String(repeating: "x", count: 8000))
        await requireError(.tooLarge) { _ = try await device.engine.sync() }
        #expect(try await metric(server, "walletvault_http_request_bytes_total") == bytesBefore, "nothing was uploaded")
        #expect(try await device.values()["photo"] != nil, "the edit stays local")
    }

    /// An operation that saves (approving a device, revoking one, restoring a kept version, recovering) and meets the
    /// server's hourly cap records the next allowed attempt as a sync does, and fails with the cap: unlike a sync's
    /// edits it is not saved later by itself, so it is no `.rateLimited` report (which says nothing was lost). Before,
    /// none recorded the time. The same operation once the cap allows it succeeds.
    @Test(arguments: ["approve", "revoke", "restoreVersion", "recover"])
    func anOperationThatSavesRecordsTheRateLimitAndFails(operation: String) async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let limited = ScriptedAnswers(server.transport())
        let a = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "A", directory: nil, transport: limited, conflictHandler: nil)
        let recoveryKEK = try RecoveryCodeKEK(code: RecoveryCode.generate())
        let first = try await a.engine.createVault(recoveryPaths: [(recoveryKEK, "Recovery code")])
        try await a.set("x", "1")
        _ = try await a.engine.sync()
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await a.engine.pairAndConfirm(b.engine)
        let newcomer = try SimulatedDevice(server: server, user: user, label: "C")
        let request = try await newcomer.engine.pairingRequest()
        let bKekID = try #require(try await a.engine.devices().first { $0.label == "B" }?.kekID)
        guard case .created(let firstVersion) = first else {
            Issue.record("no create")
            return
        }
        let run = { () async throws(SyncError) -> SyncReport in
            switch operation {
            case "approve": try await a.engine.approve(request)
            case "revoke": try await a.engine.revoke(kekID: bKekID)
            case "recover": try await a.engine.recover(with: recoveryKEK)
            default: try await a.engine.restoreVersion(firstVersion)
            }
        }
        limited.play([.rateLimited(retryAfter: 120)], to: .saves)
        let asked = Date()
        do throws(SyncError) {
            let report = try await run()
            Issue.record("expected the rate limit, got \(report)")
        } catch {
            #expect(error.code == .server && error.backupError == .rateLimited(retryAfterSeconds: 120), "\(error)")
        }
        let next = try #require(await a.engine.status().nextAttemptAt, "the next allowed attempt was not recorded")
        let ahead = next - Int64(asked.timeIntervalSince1970 * 1000)
        #expect((115_000...125_000).contains(ahead), "the next attempt is not the server's Retry-After: \(ahead) ms")
        guard case .rateLimited = try await run() else { return }
        Issue.record("the operation did not go through once the cap allowed it")
    }

    /// A merge whose save met the hourly cap: the version it merged over was opened and its counter accepted, so it
    /// becomes this device's synced version, with the merge pending on top. Before, the synced copy stayed the older
    /// version, and every operation that opens it (a revoke, an approval, a confirmation code) reported
    /// `.rollbackDetected` until the cap lifted: a false alarm, and an urgent revoke refused.
    @Test func aMergeWhoseSaveMetTheCapLeavesNoFalseRollback() async throws {
        let (a, b, _, limited) = try await pairedDevicesWithScriptedAnswersForA()
        let bKekID = try #require(try await a.engine.devices().first { $0.label == "B" }?.kekID)
        try await b.set("y", "from B")
        _ = try await b.engine.sync()
        try await a.set("z", "from A")
        limited.play([.rateLimited(retryAfter: 120)], to: .saves)
        let report = try await a.engine.sync()
        guard case .rateLimited = report else {
            Issue.record("expected the rate limit, got \(report)")
            return
        }
        #expect(try await a.values()["y"] == .string("from B"), "the version merged over is the synced one")
        #expect(try await a.values()["z"] == .string("from A"))
        #expect(await a.engine.status().hasLocalEdits)
        do throws(SyncError) {
            _ = try await a.engine.revoke(kekID: bKekID)
        } catch {
            Issue.record("the revoke failed: \(error)")
        }
        #expect(try await !a.engine.devices().contains { $0.label == "B" })
        #expect(await !a.engine.status().hasLocalEdits, "the revoke saved the merge with it")
    }

    /// An erasure while this device's saves wait out the hourly cap: its sync sends no load then, so the version it
    /// last synced may be one another device has replaced. Before, the erasure proved membership over that version,
    /// the server refused the proof, and the member was told `.removedFromVault` (which an app may answer by wiping
    /// the device).
    @Test func anErasureDuringTheCapsPauseProvesOverTheVersionTheServerHoldsNow() async throws {
        let (a, b, _) = try await devicesWithAInTheCapsPause()
        try await b.set("y", "from B")
        _ = try await b.engine.sync()
        do throws(SyncError) {
            try await a.engine.eraseAccount()
        } catch {
            Issue.record("the erasure failed: \(error)")
        }
        await requireError(.noVault) { _ = try await b.engine.sync() }
    }

    /// A sync while this device's saves wait out the hourly cap still loads: another device's save is merged under
    /// this one's pending edit and becomes the synced version, and nothing is saved until the pause ends. Before, such
    /// a sync loaded nothing until then (up to an hour): the device showed none of the other's changes, and every
    /// operation it made meanwhile went over the version it last synced.
    @Test func aSyncDuringTheCapsPauseTakesInAnotherDevicesSaveAndSavesNothing() async throws {
        let (a, b, _) = try await devicesWithAInTheCapsPause()
        try await b.set("y", "from B")
        guard case .pushed(let fromB) = try await b.engine.sync() else {
            Issue.record("B's save should go through")
            return
        }
        guard case .rateLimited = try await a.engine.sync() else {
            Issue.record("the pause should hold")
            return
        }
        #expect(try await a.values() == ["x": .string("1"), "y": .string("from B"), "z": .string("from A")])
        #expect(await a.engine.status().syncedVersion == fromB, "B's version is the synced one")
        #expect(await a.engine.status().hasLocalEdits, "A's edit is still to be saved")
        #expect(await a.engine.status().nextAttemptAt != nil, "the pause is kept")
        guard case .upToDate = try await b.engine.sync() else {
            Issue.record("A saved during the pause")
            return
        }
    }

    /// A revocation while this device's saves wait out a cap that has ended on the server (a proxy's 429, or another
    /// device's pause reported here): before, the sync before it loaded nothing, the revocation saved over the version
    /// this device last synced, and every attempt met the 409 of another device's newer save until the pause ended.
    @Test func aRevocationDuringTheCapsPauseSavesOverTheVersionTheServerHoldsNow() async throws {
        let (a, b, c) = try await devicesWithAInTheCapsPause(withThirdDevice: true)
        let cKekID = try #require(try await c?.engine.devices().first { $0.isThisDevice }?.kekID)
        try await b.set("y", "from B")
        _ = try await b.engine.sync()
        do throws(SyncError) {
            _ = try await a.engine.revoke(kekID: cKekID)
        } catch {
            Issue.record("the revocation failed: \(error)")
        }
        _ = try await b.engine.sync()
        #expect(try await b.values() == ["x": .string("1"), "y": .string("from B"), "z": .string("from A")])
        #expect(try await !b.engine.devices().contains { $0.kekID == cKekID })
        await requireError(.removedFromVault) { _ = try await c?.engine.sync() }
    }

    /// A vault the client's own limit lets through but the server's `max_blob_bytes` refuses (a 413) is `.tooLarge`,
    /// as the client's own check is, and not a `.server` failure that `changes()` would retry, uploading it again each
    /// time.
    @Test func aVaultTheServerFindsTooLargeIsTooLarge() async throws {
        let server = try InProcessServer()
        let limited = ScriptedAnswers(server.transport())
        let device = try SimulatedDevice(
            baseURL: server.baseURL, user: UUID().uuidString, label: "A", directory: nil, transport: limited, conflictHandler: nil)
        _ = try await device.engine.createVault()
        try await device.set("photo", "a large one")
        limited.play([.blobTooLarge], to: .saves)
        do throws(SyncError) {
            let report = try await device.engine.sync()
            Issue.record("the server took a vault above its limit: \(report)")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.backupError == .blobTooLarge)
        }
        #expect(try await device.values()["photo"] != nil, "the edit stays local")
    }

    @Test func recoveryInvalidationRevocationAndTamperDetection() async throws {
        let server = try InProcessServer(TestServerOptions())
        let user = UUID().uuidString
        let code = RecoveryCode.generate()
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: code), "recovery code")])
        try await a.set("passport", "P")
        _ = try await a.engine.sync()
        _ = try await a.engine.pairAndConfirm(b.engine)
        #expect(try await a.engine.keyHealth().warning == nil)

        // Every device gone: a new one restores with the recovery code alone.
        let fresh = try SimulatedDevice(server: server, user: user, label: "New phone")
        _ = try await fresh.engine.recover(with: try RecoveryCodeKEK(code: try RecoveryCode(parsing: code.formatted)))
        #expect(try await fresh.values() == ["passport": .string("P")])

        // B's key is invalidated (a biometric change): it recovers and its dead entry is dropped.
        let deadKeyID = try await b.engine.devices().first { $0.isThisDevice }!.kekID
        try Data("not a key".utf8).write(to: b.directory.appendingPathComponent("device-key.pem"))
        await requireError(.keyInvalidated) { _ = try await b.engine.sync() }
        _ = try await b.engine.recover(with: try RecoveryCodeKEK(code: code))
        let bDevices = try await b.engine.devices()
        #expect(!bDevices.contains { $0.kekID == deadKeyID })
        #expect(bDevices.contains { $0.isThisDevice })
        #expect(try await b.values() == ["passport": .string("P")])

        // A revokes B: B cannot open anything saved after, and the recovery path survives the rotation.
        _ = try await a.engine.sync()
        let bKeyID = bDevices.first { $0.isThisDevice }!.kekID
        guard case .rotated(_, let skipped) = try await a.engine.revoke(kekID: bKeyID, additionalKeys: [try RecoveryCodeKEK(code: code)])
        else {
            Issue.record("revoke should rotate")
            return
        }
        #expect(skipped.isEmpty)
        try await a.set("passport", "after revocation")
        _ = try await a.engine.sync()
        // B is told it was removed, and by whom as the blob says, not that it was never paired.
        await requireError(.removedFromVault) { _ = try await b.engine.sync() }
        do { _ = try await b.engine.sync() } catch { #expect(error.reason.contains("by \"A\""), "\(error.reason)") }

        // A server that serves an older blob, or strips a recipient, is caught.
        guard case .blob(let current) = try await a.backup.load() else {
            Issue.record("load")
            return
        }
        let olderBlob = try Data(contentsOf: fresh.directory.appendingPathComponent("synced.blob"))
        try server.storeAsTheServer(olderBlob, user: user)
        await requireError(.rollbackDetected) { _ = try await a.engine.sync() }
        try server.storeAsTheServer(try stripLastRecipient(current.blob), user: user)
        await requireError(.tampered) { _ = try await a.engine.sync() }
    }

    func stripLastRecipient(_ blob: Data) throws -> Data {
        guard case .object(var members) = try JSONParser().parse(blob),
            let index = members.firstIndex(where: { $0.key == "wrappedDeks" }), case .array(var entries) = members[index].value
        else { throw SyncError(.invalidInput, "not a blob") }
        entries.removeLast()
        members[index].value = .array(entries)
        return JSONSerializer.data(of: .object(members))
    }
}

/// A transport that, when told, replaces the next backup request's session token with a dead one,
/// as if the server had revoked the session.
final class RevokingTransport: HTTPTransport, Sendable {
    private let pending = Mutex(false)
    private let inner: any HTTPTransport

    init(inner: any HTTPTransport = URLSessionTransport()) {
        self.inner = inner
    }

    func revokeNext() { pending.withLock { $0 = true } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = request
        if request.url?.path.hasSuffix("wallet-backup.ashx") == true,
            pending.withLock({
                let was = $0
                $0 = false
                return was
            })
        {
            request.setValue("Bearer revoked.session.token", forHTTPHeaderField: "Authorization")
        }
        return try await inner.send(request)
    }
}
