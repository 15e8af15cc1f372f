import Foundation

/// A directory of this test process's own under the system's temporary directory, removed when the process exits.
///
/// SQLite stores are made by the hundred per run and Swift Testing has no teardown after the last test; without
/// this, every run left its databases (and their logs) behind in /tmp.
public enum ScratchDirectory {
    /// The directory, created on first use.
    public static let url: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("walletvault-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(at: ScratchDirectory.url)
        }
        return url
    }()

    /// A path no other test uses, `name-<uuid>.suffix` inside the directory.
    public static func path(_ name: String, suffix: String) -> String {
        url.appendingPathComponent("\(name)-\(UUID().uuidString).\(suffix)").path
    }
}
