import Foundation
import Testing
import VaultEnvelope

@Suite("The one writer of private files")
struct OwnerOnlyFileTests {
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("owner-only-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) & 0o777
    }

    @Test func replacesAFileOthersCouldReadWithOneOnlyTheOwnerCan() throws {
        let url = directory.appendingPathComponent("profile.json")
        try Data("old".utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        try OwnerOnlyFile.replace(url, with: Array("new".utf8))
        #expect(try mode(url) == 0o600)
        #expect(try Data(contentsOf: url) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["profile.json"], "a temporary file was left")
    }

    @Test func writesLargeFilesWhole() throws {
        let url = directory.appendingPathComponent("big")
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try OwnerOnlyFile.replace(url, with: bytes)
        #expect(try Data(contentsOf: url) == Data(bytes))
    }

    @Test func createNeverReplacesOrFollowsALink() throws {
        let target = directory.appendingPathComponent("target")
        try Data("keep".utf8).write(to: target)
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(throws: VaultEnvelopeError.self) { try OwnerOnlyFile.create(link, bytes: Array("evil".utf8)) }
        #expect(throws: VaultEnvelopeError.self) { try OwnerOnlyFile.create(target, bytes: Array("evil".utf8)) }
        #expect(try Data(contentsOf: target) == Data("keep".utf8))
    }

    @Test func aFailedReplaceLeavesTheOldFileAndNothingElse() throws {
        let missing = directory.appendingPathComponent("no-such-dir").appendingPathComponent("file")
        do {
            try OwnerOnlyFile.replace(missing, with: Array("x".utf8))
            Issue.record("a write into a missing directory succeeded")
        } catch {
            #expect(error.code == .keyStorage)
            #expect(error.reason.contains("file"), "the error names the file: \(error.reason)")
        }
        // A directory in the file's place cannot be renamed over: the old entry stays, no temporary is left.
        let occupied = directory.appendingPathComponent("occupied")
        try FileManager.default.createDirectory(at: occupied, withIntermediateDirectories: false)
        #expect(throws: VaultEnvelopeError.self) { try OwnerOnlyFile.replace(occupied, with: Array("x".utf8)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["occupied"])
    }
}
