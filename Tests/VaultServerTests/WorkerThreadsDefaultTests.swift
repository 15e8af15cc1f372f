import Foundation
import Testing
import VaultHTTP
import VaultServer

/// How many HTTP workers a server runs when its configuration does not say.
@Suite struct WorkerThreadsDefaultTests {
    @Test func oneWorkerPerCoreAtLeastTwo() throws {
        #expect(HTTPServer.Options.defaultThreads == max(2, ProcessInfo.processInfo.activeProcessorCount))
        #expect(HTTPServer.Options().threads == HTTPServer.Options.defaultThreads)
    }

    @Test func aConfigurationWithoutThreadsTakesTheDefaultAndOneWithThemKeepsThem() throws {
        let base = """
            "listen": "127.0.0.1:0", "database": "sqlite:v.sqlite", "session_keys_file": "k", "storage_key_pepper_file": "p",
            "issuers": [{"issuer": "https://idp.example", "jwks_file": "j", "audiences": ["a"]}]
            """
        let unset = try JSONDecoder().decode(ServerConfiguration.self, from: Data("{\(base)}".utf8))
        #expect(unset.threads == HTTPServer.Options.defaultThreads)
        let set = try JSONDecoder().decode(ServerConfiguration.self, from: Data("{\(base), \"threads\": 7}".utf8))
        #expect(set.threads == 7)
    }
}
