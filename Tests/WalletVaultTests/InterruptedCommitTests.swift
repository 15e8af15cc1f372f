import Foundation
import Synchronization
import Testing
import VaultTestSupport
import WalletVault

/// A crash or an I/O error between the files one local commit writes (working copy, merge base, synced blob, sync
/// record) must leave a profile whose next sync loses no device's edit and undoes no decision.
///
/// A file that cannot be replaced (a non-empty directory in its place) makes that write fail; putting the old file
/// back then leaves exactly what a crash just before that write would: the earlier writes done, it and the later not.
@Suite("A commit interrupted between its writes loses nothing")
struct InterruptedCommitTests {
    /// The files a commit writes, each the one a test makes fail.
    static let commitFiles = ["working.sealed", "synced.sealed", "synced.blob", "sync.json"]

    /// One of a profile's files, made unwritable and later put back as it was.
    final class BrokenFile: Sendable {
        private let file: URL
        private let old = Mutex<Data?>(nil)

        init(_ name: String, in directory: URL) {
            file = directory.appendingPathComponent(name)
        }

        /// Puts a non-empty directory where the file was, so replacing it fails.
        func breakIt() throws {
            let bytes = try? Data(contentsOf: file)
            old.withLock { $0 = bytes }
            try? FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
            try Data().write(to: file.appendingPathComponent("blocker"))
        }

        /// Puts the file back as it was before `breakIt()`.
        func mend() throws {
            try FileManager.default.removeItem(at: file)
            try old.withLock { $0 }?.write(to: file)
        }
    }

    @Test(arguments: commitFiles)
    func aMergedSaveWhoseCommitIsCutShortRevertsNoOtherDevicesEdit(failing name: String) async throws {
        let edits = EditDuringSyncTests()
        let pair = try await edits.pair()
        try await pair.a.set("licence", "from A")
        _ = try await pair.a.engine.sync()
        try await pair.b.set("card", "from B")
        let broken = BrokenFile(name, in: pair.b.directory)
        pair.gate.arm(method: "POST", action: "save")
        await requireError(.localStorage) { _ = try await edits.sync(pair.b, holdingAt: pair.gate) { try broken.breakIt() } }
        try broken.mend()
        try await edits.expectSurvives("card", "from B", on: pair.b, peer: pair.a)
        let licence = try await pair.a.values()["licence"]
        #expect(licence == .string("from A"), "B's next save reverted A's edit")
    }

    @Test(arguments: commitFiles)
    func keepingTheCloudsVersionStaysKeptWhenItsCommitIsCutShort(failing name: String) async throws {
        let edits = EditDuringSyncTests()
        let prompt = RequestGate()
        // The prompt is the last await before the commit: the file breaks while the user decides.
        let pair = try await edits.pair { _ in
            await prompt.pass()
            return .keepCloud
        }
        let broken = BrokenFile(name, in: pair.b.directory)
        try await pair.a.set("passport", "from A")
        _ = try await pair.a.engine.sync()
        try await pair.b.set("passport", "from B")
        prompt.arm()
        await requireError(.localStorage) { _ = try await edits.sync(pair.b, holdingAt: prompt) { try broken.breakIt() } }
        try broken.mend()
        _ = try await pair.b.engine.sync()
        _ = try await pair.a.engine.sync()
        let onA = try await pair.a.values()["passport"]
        let onB = try await pair.b.values()["passport"]
        #expect(onA == .string("from A"), "the cloud's version was chosen, yet B's replaced it")
        #expect(onB == .string("from A"))
    }

    @Test func anEditWhoseBookkeepingCannotBeWrittenIsNotShownAsMade() async throws {
        let pair = try await EditDuringSyncTests().pair()
        let broken = BrokenFile("sync.json", in: pair.b.directory)
        try broken.breakIt()
        await requireError(.localStorage) { try await pair.b.set("card", "from B") }
        try broken.mend()
        _ = try await pair.b.engine.sync()
        _ = try await pair.a.engine.sync()
        let onA = try await pair.a.values()
        let onB = try await pair.b.values()
        #expect(onA == onB, "B shows an edit that no sync will ever save")
    }
}
