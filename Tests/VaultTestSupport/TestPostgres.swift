import Foundation
import Testing

/// The PostgreSQL cluster that `scripts/with-postgres.sh` starts for the tests.
///
/// Without it the PostgreSQL tests are skipped with a message, except under CI, where they run and fail.
public enum TestPostgres {
    /// The test process's environment.
    public static let environment = ProcessInfo.processInfo.environment

    /// The database URL, when a cluster was provided.
    public static let url = environment["WALLETVAULT_TEST_POSTGRES_URL"]

    /// Whether PostgreSQL tests run: a cluster is provided, or CI demands them (and they then fail).
    public static let enabled = url != nil || environment["CI"] != nil

    /// Shown for the skipped tests.
    public static let skipMessage: Comment =
        "PostgreSQL tests skipped: WALLETVAULT_TEST_POSTGRES_URL is not set; run them under scripts/with-postgres.sh"

    /// CI demands PostgreSQL but the variable naming it is not set.
    public struct NotConfigured: Error, CustomStringConvertible {
        /// The missing variable.
        public let variable: String
        public var description: String { "\(variable) is not set but CI is: run the tests under scripts/with-postgres.sh" }
    }

    /// The database URL, or an error naming the missing variable.
    public static func requireURL() throws -> String {
        guard let url else { throw NotConfigured(variable: "WALLETVAULT_TEST_POSTGRES_URL") }
        return url
    }

    /// Runs this cluster's `pg_ctl` (as its owner) with `arguments`, e.g. `["stop", "-m", "immediate", "-w"]`.
    ///
    /// posix_spawn and waitpid on a thread of its own: Foundation's `Process.waitUntilExit` never returned
    /// here once `pg_ctl start` had left the server running in the background. The child gets only stdin, stdout
    /// and stderr: a restarted server kept every descriptor it inherited, among them the pipes of `walletvault`
    /// processes other tests were running at that moment, whose readers then waited for an end that never came.
    public static func pgCtl(_ arguments: [String]) async throws {
        guard let path = environment["WALLETVAULT_TEST_PGCTL"] else { throw NotConfigured(variable: "WALLETVAULT_TEST_PGCTL") }
        let status = await withCheckedContinuation { (done: CheckedContinuation<Int32, Never>) in
            Thread {
                let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
                defer { for argument in argv { free(argument) } }
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                guard closeFrom(&actions, 3) == 0 else { return done.resume(returning: -1) }
                var pid: pid_t = 0
                guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return done.resume(returning: -1) }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                done.resume(returning: status)
            }.start()
        }
        guard status == 0 else { throw PgCtlFailed(arguments: arguments, status: status) }
    }

    /// `pg_ctl` exited with a failure.
    public struct PgCtlFailed: Error {
        let arguments: [String]
        let status: Int32
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not
    /// export: looked up by name and called through a C function pointer.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: AddCloseFrom = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("posix_spawn_file_actions_addclosefrom_np is missing: glibc 2.34 or later is needed")
        }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
}
