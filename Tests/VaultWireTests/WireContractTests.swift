import Foundation
import Testing
import VaultCore
import VaultWire

/// What the client sends is what the server reads, and the OpenAPI document names the same codes and paths.
@Suite("The wire contract")
struct WireContractTests {
    static let syncIDs = ["2026-08-12T19:00:00.000Z", "2026-08-12T19:00:00.001Z"].map { UTCTimestamp(rfc3339: $0)! }

    @Test(arguments: [SavePrecondition.none, .matches([syncIDs[0]]), .matches(syncIDs), .exists, .absent])
    func everyPreconditionRoundTripsThroughItsHeader(_ precondition: SavePrecondition) throws {
        let header = precondition.header
        let parsed = try SavePrecondition(
            ifMatch: header?.name == "If-Match" ? header?.value : nil,
            ifNoneMatch: header?.name == "If-None-Match" ? header?.value : nil)
        #expect(parsed == precondition)
    }

    @Test func ifMatchOfASyncIDThatIsNoneMatchesNothing() {
        #expect(SavePrecondition.ifMatch(syncID: "2026-08-12T19:00:00.000Z") == .matches([Self.syncIDs[0]]))
        let bogus = SavePrecondition.ifMatch(syncID: "not a version")
        #expect(bogus == .matches([]))
        #expect(!bogus.admits(current: Self.syncIDs[0]))
        #expect(!bogus.admits(current: nil))
    }

    @Test func theServerReadsPreconditionsAsRFC9110Says() throws {
        #expect(try SavePrecondition(ifMatch: "*", ifNoneMatch: nil) == .exists)
        #expect(try SavePrecondition(ifMatch: " W/\"2026-08-12T19:00:00.000Z\" ,\t\"x\"", ifNoneMatch: nil) == .matches([Self.syncIDs[0]]))
        #expect(
            try SavePrecondition(ifMatch: "\"2026-08-12T19:00:00.000Z\"", ifNoneMatch: "*") == .matches([Self.syncIDs[0]]),
            "If-Match wins over If-None-Match")
        #expect(throws: WireErrorCode.invalidPrecondition) {
            try SavePrecondition(ifMatch: nil, ifNoneMatch: "\"2026-08-12T19:00:00.000Z\"")
        }
    }

    @Test func entityTagsQuoteOneSyncID() {
        let tag = EntityTag.header(for: Self.syncIDs[1])
        #expect(tag == "\"2026-08-12T19:00:00.001Z\"")
        #expect(EntityTag.syncID(tag) == Self.syncIDs[1])
        for bad in ["", "\"", "2026-08-12T19:00:00.001Z", "*", "\"a\"", "\"\(Self.syncIDs[0])\", \"\(Self.syncIDs[1])\""] {
            #expect(EntityTag.syncID(bad) == nil, "\(bad)")
        }
    }

    @Test func actionsTakeTheirMethodsAndHEADWhereverGET() {
        #expect(BackupAction.allCases.map(\.rawValue) == ["save", "load", "versions", "delete"])
        #expect(BackupAction.save.method == "POST" && BackupAction.delete.method == "POST")
        #expect(BackupAction.load.allowedMethods == ["GET", "HEAD"] && BackupAction.versions.allowedMethods == ["GET", "HEAD"])
    }

    /// docs/openapi.yaml, read from the source tree.
    static let openAPI: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)) ?? ""
    }()

    @Test func theOpenAPIDocumentNamesExactlyTheseErrorCodes() throws {
        let lines = Self.openAPI.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(!lines.isEmpty, "docs/openapi.yaml not found")
        var documented: Set<String> = []
        for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces) == "error:" && index + 1 < lines.count {
            let next = lines[index + 1].trimmingCharacters(in: .whitespaces)
            if next.hasPrefix("const: ") { documented.insert(String(next.dropFirst("const: ".count))) }
        }
        #expect(documented == Set(WireErrorCode.allCases.map(\.rawValue)))
    }

    @Test func theOpenAPIDocumentHasEveryPathAndAction() {
        for path in [WirePath.sessionToken, WirePath.backup, WirePath.health, WirePath.ready, WirePath.metrics] {
            #expect(Self.openAPI.contains("\n  \(path):"), "\(path)")
        }
        #expect(Self.openAPI.contains("enum: [load, versions]") && Self.openAPI.contains("enum: [save, delete]"))
    }

    @Test func everyCodeHasTheStatusTheDocumentGivesIt() {
        let expected: [WireErrorCode: Int] = [
            .invalidToken: 401, .conflict: 409, .rateLimited: 429, .blobTooLarge: 413, .notFound: 404, .unavailable: 503,
            .methodNotAllowed: 405, .internalError: 500, .invalidJSON: 400,
        ]
        for (code, status) in expected { #expect(code.status == status, "\(code)") }
    }
}
