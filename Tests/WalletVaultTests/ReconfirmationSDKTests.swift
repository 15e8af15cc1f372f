import Foundation
import Testing
import VaultCore
import VaultTestSupport
import WalletVault

/// A member without a pinned anchor (as every member reading through a public-key entry is right after the upgrade
/// to anchored blobs, FORMAT.md §11.7) confirms the vault again with a device that pinned it, and loses nothing.
@Suite struct ReconfirmationSDKTests {
    @Test func aMemberWithoutAnAnchorConfirmsAgainAndKeepsItsEntryAndEdits() async throws {
        let (server, user, a, b) = try await JoiningAndLocalStateSDKTests.pairedDevices()

        // B's counters and anchor are gone (deleted, or a profile from before they were sealed): issue 26 point 10.
        try FileManager.default.removeItem(at: b.directory.appendingPathComponent("counters.sealed"))
        let reopened = try SimulatedDevice(server: server, user: user, label: "B", directory: b.directory)
        try await reopened.set("ticket", "edited on B")
        await requireError(.confirmationRequired) { _ = try await reopened.engine.sync() }

        let entries = try await a.engine.devices().count
        let code = try await a.engine.approveAndGetCode(reopened.engine)
        #expect(try await a.engine.devices().count == entries, "approving a member again adds no entry")
        _ = try await reopened.engine.confirmPairing(code: code)
        _ = try await reopened.engine.sync()
        #expect(try await reopened.values() == ["passport": .string("P1"), "ticket": .string("edited on B")])
        _ = try await a.engine.sync()
        #expect(try await a.values()["ticket"] == .string("edited on B"))
    }
}
