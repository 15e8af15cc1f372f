import Foundation
import Testing
import VaultTestSupport

@Suite("JSONTestSuite bodies against the server")
struct JSONCorpusTests {
    @Test func everyFileGetsADocumentedAnswerAndChangesNothing() async throws {
        let server = try InProcessServer(TestServerOptions(savesPerHour: 1000))
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let good = sampleBlob("corpus")
        #expect(try await server.save(good, token: token).status == 200)
        // The corpus lives once in the repository, with the VaultCore tests' fixtures.
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("VaultJSONTests/Fixtures/JSONTestSuite/test_parsing")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(files.count == 318)
        for file in files {
            let reply = try await server.save(try Data(contentsOf: file), token: token)
            let code = reply.json["error"] as? String
            #expect(reply.status == 400, "\(file.lastPathComponent)")
            #expect(code == "invalid_json" || code == "invalid_vault_shape", "\(file.lastPathComponent)")
        }
        #expect(try await server.load(token: token).body == good)
    }
}
