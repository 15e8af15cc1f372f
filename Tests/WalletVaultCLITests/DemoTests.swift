import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `walletvault demo` tells the whole story, exits 0, and leaves nothing running.
@Suite("walletvault demo")
struct DemoTests {
    @Test func demoWalksEveryStepAndLeavesNoProcess() throws {
        let result = try CLIProcess.run(["demo"], timeoutSeconds: 180)
        #expect(result.code == 0, "\(result.all)")
        for step in 1...6 { #expect(result.stdout.contains("── Step \(step)."), "step \(step)") }
        for command in [
            "init", "push", "pair request", "pair approve", "pull", "sync --keep local", "recover --code-file", "revoke",
            "devices",
        ] {
            #expect(result.stdout.contains("$ walletvault --home $DEMO/"), "narrates commands")
            #expect(result.stdout.contains(" \(command)"), "runs \(command)")
        }
        #expect(result.stdout.contains("(exit 3, as expected)"), "the conflict is shown")
        #expect(result.stdout.contains("changed on both sides: passport"))
        #expect(result.stdout.contains("invalidated"))
        #expect(result.stdout.contains("Revoked \"Phone (B)\""))

        // The server it started is gone, and so is its directory.
        let pidText = try #require(
            result.stdout.range(of: #"pid [0-9]+"#, options: .regularExpression).map { result.stdout[$0].dropFirst(4) })
        let pid = try #require(Int32(pidText))
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "server pid \(pid) still exists")
        let workspace = try #require(
            result.stdout.range(of: #"/[^ ]*walletvault-demo-[0-9A-F]+"#, options: .regularExpression)
                .map { String(result.stdout[$0]) })
        #expect(!FileManager.default.fileExists(atPath: workspace))
    }

    @Test func demoWithoutAServerBinarySaysHowToGetOne() throws {
        let result = try CLIProcess.run(["demo"], environment: ["WALLETVAULT_SERVER_BIN": "/nonexistent/walletvault-server"])
        #expect(result.code == 2)
        #expect(result.stderr.contains("WALLETVAULT_SERVER_BIN"))
    }
}
