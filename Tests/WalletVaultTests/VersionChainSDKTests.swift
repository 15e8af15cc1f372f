import Foundation
import Testing
import VaultCore
import VaultTestSupport
import WalletVault

/// Issue 26 point 7 through the engine: each version names its predecessor's digest (FORMAT.md §11.10), so a server
/// that drops one member's write for another's is caught by the member it dropped, and two members that compare
/// fingerprints see the fork.
@Suite struct VersionChainSDKTests {
    @Test func aMemberWhoseWriteTheServerDroppedRefusesTheOtherBranchAndTheFingerprintsDiffer() async throws {
        let (server, user, a, b) = try await JoiningAndLocalStateSDKTests.pairedDevices()
        _ = try await b.engine.sync()
        let common = try #require(try await a.engine.vaultFingerprint())
        #expect(try await b.engine.vaultFingerprint() == common)
        #expect(common.contains(", version "), "\(common)")
        guard case .blob(let both) = try await a.backup.load() else { throw CancellationError() }
        // A saves; the server puts back the version both had and takes B's save over it, as if A's never came.
        try await a.set("visa", "V-A")
        _ = try await a.engine.sync()
        try server.storeAsTheServer(both.blob, user: user)
        try await b.set("visa", "V-B")
        _ = try await b.engine.sync()
        // Same epoch, same counter, two histories: the text two people compare differs.
        let onA = try #require(try await a.engine.vaultFingerprint())
        let onB = try #require(try await b.engine.vaultFingerprint())
        #expect(onA.prefix(while: { $0 != "," }) == onB.prefix(while: { $0 != "," }))
        #expect(onA != onB)
        // B writes on over its branch; A, served that version, finds it does not follow the one A wrote.
        try await b.set("ticket", "T-B")
        _ = try await b.engine.sync()
        await requireError(.forkDetected) { _ = try await a.engine.sync() }
        #expect(try await a.values()["visa"] == .string("V-A"))
    }
}
