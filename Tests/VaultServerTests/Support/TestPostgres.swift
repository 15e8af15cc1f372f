import Foundation
import Testing

/// The PostgreSQL cluster that `scripts/with-postgres.sh` starts for the tests.
///
/// Without it the PostgreSQL tests are skipped with a message, except under CI, where they run and fail.
enum TestPostgres {
    static let environment = ProcessInfo.processInfo.environment

    /// The database URL, when a cluster was provided.
    static let url = environment["WALLETVAULT_TEST_POSTGRES_URL"]

    /// Whether PostgreSQL tests run: a cluster is provided, or CI demands them (and they then fail).
    static let enabled = url != nil || environment["CI"] != nil

    /// Shown for the skipped tests.
    static let skipMessage: Comment = "PostgreSQL tests skipped: WALLETVAULT_TEST_POSTGRES_URL is not set; run them under scripts/with-postgres.sh"

    struct NotConfigured: Error, CustomStringConvertible {
        let variable: String
        var description: String { "\(variable) is not set but CI is: run the tests under scripts/with-postgres.sh" }
    }

    /// The database URL, or an error naming the missing variable.
    static func requireURL() throws -> String {
        guard let url else { throw NotConfigured(variable: "WALLETVAULT_TEST_POSTGRES_URL") }
        return url
    }

    /// Runs this cluster's `pg_ctl` (as its owner) with `arguments`, e.g. `["stop", "-m", "immediate", "-w"]`.
    static func pgCtl(_ arguments: [String]) throws {
        guard let path = environment["WALLETVAULT_TEST_PGCTL"] else { throw NotConfigured(variable: "WALLETVAULT_TEST_PGCTL") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PgCtlFailed(arguments: arguments, status: process.terminationStatus) }
    }

    struct PgCtlFailed: Error { let arguments: [String]; let status: Int32 }
}
