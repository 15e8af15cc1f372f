import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `walletvault watch` on one device prints another device's push as it arrives, and Ctrl-C stops it.
@Suite("walletvault watch", .serialized)
struct WatchCommandTests {
    /// Whether the dev server holds `count` long-polls now, by its `/metrics`.
    static func waiting(_ count: Int, on bed: CLITestBed) -> Bool {
        guard let text = try? String(contentsOf: bed.server.baseURL.appendingPathComponent("metrics"), encoding: .utf8) else {
            return false
        }
        return text.split(separator: "\n").contains("walletvault_long_polls_waiting \(count)")
    }

    @Test func anotherDevicesPushIsPrintedAsItArrivesUntilInterrupted() throws {
        let bed = try CLITestBed()
        let paths = NewUserPathsTests()
        _ = try paths.createVault(bed)
        #expect(try bed.login("B", label: "Phone B").code == 0)
        try paths.pair(bed, "B")

        let watch = try RunningCLIProcess(["--home", bed.home("B").path, "watch"])
        let process = watch.process
        defer { if process.isRunning { process.terminate() } }
        func text() -> String { watch.text() }
        func waitFor(_ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while !condition(), process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            return condition()
        }

        try #require(waitFor { Self.waiting(1, on: bed) }, "watch never long-polled: \(text())")
        let pushed = try bed.run("A", ["push", try bed.file("more.json", #"{"card": "C1"}"#)])
        #expect(pushed.code == 0, "\(pushed.all)")
        #expect(waitFor { text().contains("Restored the server's vault") }, "watch printed no change: \(text())")
        kill(process.processIdentifier, SIGINT)
        _ = watch.finish(within: 20)
        #expect(process.terminationStatus == 130, "exit \(process.terminationStatus): \(watch.errors.wait())")
        let offline = try bed.run("B", ["pull", "--offline"])
        #expect(offline.stdout.contains("C1"), "the change watch printed is not in B's copy: \(offline.all)")
    }
}
