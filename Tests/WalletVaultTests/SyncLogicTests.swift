import Testing
import VaultCore

@testable import WalletVault

@Suite struct ThreeWayMergeTests {
    let t0 = UTCTimestamp(millisecondsSinceEpoch: 1_000_000)
    func at(_ seconds: Int64) -> UTCTimestamp { UTCTimestamp(millisecondsSinceEpoch: t0.millisecondsSinceEpoch + seconds * 1000) }

    var base: VaultDocument {
        var document = VaultDocument()
        document.set("passport", to: .string("P1"), at: t0)
        document.set("license", to: .string("L1"), at: t0)
        document.set("diploma", to: .string("D1"), at: t0)
        return document
    }

    @Test func editsToDifferentItemsMergeWithoutConflict() {
        var local = base
        local.set("passport", to: .string("P2"), at: at(10))
        local.set("ticket", to: .string("T1"), at: at(11))
        var remote = base
        remote.set("license", to: .string("L2"), at: at(20))
        remote.delete("diploma", at: at(21))
        let result = ThreeWayMerge.merge(base: base, local: local, remote: remote)
        #expect(result.conflicts.isEmpty)
        #expect(result.merged.liveValues == ["passport": .string("P2"), "license": .string("L2"), "ticket": .string("T1")])
        #expect(result.merged.items["diploma"]?.isDeleted == true)
    }

    @Test func editsToTheSameItemConflict() {
        var local = base
        local.set("passport", to: .string("P-local"), at: at(30))
        var remote = base
        remote.set("passport", to: .string("P-remote"), at: at(20))
        remote.set("license", to: .string("L2"), at: at(5))
        let newest = ThreeWayMerge.merge(base: base, local: local, remote: remote)
        #expect(newest.conflicts == ["passport"])
        #expect(newest.merged.liveValues["passport"] == .string("P-local"))
        #expect(newest.merged.liveValues["license"] == .string("L2"))
        #expect(
            ThreeWayMerge.merge(base: base, local: local, remote: remote, conflictWinner: .remote)
                .merged.liveValues["passport"] == .string("P-remote"))
        #expect(
            ThreeWayMerge.merge(base: base, local: local, remote: remote, conflictWinner: .local)
                .merged.liveValues["passport"] == .string("P-local"))
    }

    @Test func deleteAgainstEditConflictsAndIdenticalEditsDoNot() {
        var local = base
        local.delete("passport", at: at(10))
        local.set("license", to: .string("same"), at: at(10))
        var remote = base
        remote.set("passport", to: .string("P2"), at: at(12))
        remote.set("license", to: .string("same"), at: at(14))
        let result = ThreeWayMerge.merge(base: base, local: local, remote: remote)
        #expect(result.conflicts == ["passport"])
        #expect(result.merged.items["license"] == .init(value: .string("same"), modifiedAt: at(14)))
    }

    @Test func documentJSONRoundTrips() throws {
        var document = base
        document.delete("license", at: at(3))
        document.set("nested", to: .object([("a", .array([.integer(1), .bool(false)]))]), at: at(4))
        #expect(try VaultDocument(json: document.json) == document)
        #expect(throws: VaultShapeError.self) { try VaultDocument(json: .object([("items", .array([]))])) }
    }
}

@Suite struct SyncPlannerTests {
    let planner = SyncPlanner()

    @Test(arguments: [
        (
            SyncPlanner.LocalState(syncedVersion: "v1", hasLocalEdits: false, hasVault: true),
            SyncPlanner.RemoteState.changed(version: "v2"),
            SyncPlanner.Step.restore(version: "v2")
        ),
        (.init(syncedVersion: "v1", hasLocalEdits: true, hasVault: true), .unchanged, .push(basedOn: "v1")),
        (.init(syncedVersion: "v1", hasLocalEdits: true, hasVault: true), .changed(version: "v2"), .merge(remoteVersion: "v2")),
        (.init(syncedVersion: "v1", hasLocalEdits: false, hasVault: true), .unchanged, .upToDate),
        (.init(syncedVersion: nil, hasLocalEdits: true, hasVault: true), .empty, .createRemote),
        (.init(syncedVersion: nil, hasLocalEdits: false, hasVault: false), .changed(version: "v9"), .restore(version: "v9")),
        (.init(syncedVersion: nil, hasLocalEdits: false, hasVault: false), .empty, .upToDate),
        // A vault made here before ever syncing must not be replaced by the server's silently.
        (.init(syncedVersion: nil, hasLocalEdits: false, hasVault: true), .changed(version: "v3"), .merge(remoteVersion: "v3")),
    ])
    func plans(local: SyncPlanner.LocalState, remote: SyncPlanner.RemoteState, expected: SyncPlanner.Step) {
        #expect(planner.plan(local: local, remote: remote) == expected)
    }

    @Test func mergeResolution() {
        let clean = ThreeWayMerge.Result(merged: VaultDocument(), conflicts: [])
        let clash = ThreeWayMerge.Result(merged: VaultDocument(), conflicts: ["passport"])
        let early = UTCTimestamp(millisecondsSinceEpoch: 0)
        let later = UTCTimestamp(millisecondsSinceEpoch: 30_000)
        let muchLater = UTCTimestamp(millisecondsSinceEpoch: 120_000)
        #expect(planner.resolve(merge: clean, localUpdated: early, remoteUpdated: later) == .pushMerged)
        #expect(planner.resolve(merge: clash, localUpdated: early, remoteUpdated: later) == .ask(conflictingItems: ["passport"]))

        // The seed's rule silently keeps the newer side within a minute, even over a conflicting item.
        let seed = SyncPlanner(policy: .seedTimestamps(promptThresholdSeconds: 60))
        #expect(seed.resolve(merge: clash, localUpdated: early, remoteUpdated: later) == .takeRemote)
        #expect(seed.resolve(merge: clash, localUpdated: later, remoteUpdated: early) == .takeLocal)
        #expect(seed.resolve(merge: clash, localUpdated: early, remoteUpdated: muchLater) == .ask(conflictingItems: ["passport"]))
    }
}
