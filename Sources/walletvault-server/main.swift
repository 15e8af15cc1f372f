import Dispatch
import Foundation
import VaultDevIssuer
import VaultServer

let usage = """
    usage: walletvault-server --config FILE
           walletvault-server erase-user --config FILE --issuer ISS --azp AZP --subject SUB
               (erases one user's vault without a writer proof; stop a server on sqlite: first)
           walletvault-server --dev [--listen 127.0.0.1:8080] [--data-dir ./walletvault-data] [--saves-per-hour N]
    options: --threads N  HTTP worker threads (default one per core, at least 2, or the config's \"threads\")
                              [--database sqlite:PATH|postgresql://...]
    options: --database-pool-size N  PostgreSQL connections (default 8, or the config's \"database_pool_size\")
    options: --body-cache-directory DIR, --body-cache-bytes N  a PostgreSQL node's body cache (emptied at start) and
                              its size (or the config's \"body_cache_directory\" and \"body_cache_bytes\")
    options: --max-wait-seconds N  longest long-poll wait a load may ask for (default 60, or the config's limit)
    options: --max-connections N, --max-connections-per-ip N, --max-long-polls N, --long-polls-per-user N
                              the config's limits of those names (for benchmarks that hold many connections)
    options: --quiet  no per-request log lines
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("walletvault-server: \(message)\n".utf8))
    exit(2)
}

nonisolated(unsafe) var arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name) else { return nil }
    guard index + 1 < arguments.count else { fail("\(name) needs a value\n\(usage)") }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
    return value
}
func flag(_ name: String) -> Bool {
    guard let index = arguments.firstIndex(of: name) else { return false }
    arguments.remove(at: index)
    return true
}

if flag("--help") || flag("-h") {
    print(usage)
    exit(0)
}
if arguments.first == "erase-user" {
    arguments.removeFirst()
    guard let path = option("--config"), let issuer = option("--issuer"), let azp = option("--azp"),
        let subject = option("--subject"), arguments.isEmpty
    else { fail(usage) }
    do {
        try ServerBootstrap.eraseUser(try ServerConfiguration.load(path: path), issuer: issuer, authorizedParty: azp, subject: subject)
    } catch {
        fail(error.description)
    }
    print("walletvault-server: erased the vault of that user (if there was one)")
    exit(0)
}
let quiet = flag("--quiet")
let dev = flag("--dev")
let configPath = option("--config")
let listen = option("--listen")
let dataDirectory = option("--data-dir")
let threads = option("--threads").map { text -> Int in
    guard let number = Int(text), (1...256).contains(number) else { fail("--threads needs a number from 1 to 256") }
    return number
}
let database = option("--database")
let databasePoolSize = option("--database-pool-size").map { text -> Int in
    guard let number = Int(text), (1...1024).contains(number) else { fail("--database-pool-size needs a number from 1 to 1024") }
    return number
}
let bodyCacheDirectory = option("--body-cache-directory")
let bodyCacheBytes = option("--body-cache-bytes").map { text -> Int in
    guard let number = Int(text), ((1 << 20)...(1 << 40)).contains(number) else {
        fail("--body-cache-bytes needs a number from 1048576 (1 MiB) to 1 TiB")
    }
    return number
}
let maxWaitSeconds = option("--max-wait-seconds").map { text -> Int in
    guard let number = Int(text), (1...300).contains(number) else { fail("--max-wait-seconds needs a number from 1 to 300") }
    return number
}
/// A `--NAME N` option's count, 0 or more, or nil without it.
func countOption(_ name: String) -> Int? {
    option(name).map { text -> Int in
        guard let number = Int(text), number >= 0 else { fail("\(name) needs a number, 0 or more") }
        return number
    }
}
let connectionLimits = (
    total: countOption("--max-connections"), perIP: countOption("--max-connections-per-ip"),
    longPolls: countOption("--max-long-polls"), longPollsPerUser: countOption("--long-polls-per-user")
)
let savesPerHour = option("--saves-per-hour").map { text -> Int in
    guard let number = Int(text), number > 0 else { fail("--saves-per-hour needs a positive number") }
    return number
}
guard arguments.isEmpty else { fail("unknown arguments \(arguments.joined(separator: " "))\n\(usage)") }

// The signals are taken before the server listens. Taken after it said it listens, a SIGTERM sent in between (a test
// stopping a server it had just used, a supervisor stopping one that had just started) was ignored and the server
// ran on. The handlers run on the main queue, which is served only from `dispatchMain()`, once `running` is set.
nonisolated(unsafe) var running: ServerBootstrap.Running?
signal(SIGTERM, SIG_IGN)
signal(SIGINT, SIG_IGN)
let signals = [SIGTERM, SIGINT].map { DispatchSource.makeSignalSource(signal: $0, queue: .main) }
for source in signals {
    source.setEventHandler {
        // Stop accepting, let requests in flight finish, then exit: every acknowledged save is already durable.
        let drained = running?.shutDown() ?? true
        FileHandle.standardError.write(Data("walletvault-server: stopped\(drained ? "" : " (grace period over)")\n".utf8))
        exit(0)
    }
    source.resume()
}

/// The command line's settings over the configuration's, in either mode.
func applyOptions(to configuration: inout ServerConfiguration) {
    if let threads { configuration.threads = threads }
    if let database { configuration.database = database }
    if let databasePoolSize { configuration.databasePoolSize = databasePoolSize }
    if let bodyCacheDirectory { configuration.bodyCacheDirectory = bodyCacheDirectory }
    if let bodyCacheBytes { configuration.bodyCacheBytes = bodyCacheBytes }
    if let maxWaitSeconds { configuration.limits.maxWaitSeconds = maxWaitSeconds }
    if let total = connectionLimits.total { configuration.limits.maxConnections = total }
    if let perIP = connectionLimits.perIP { configuration.limits.maxConnectionsPerIP = perIP }
    if let longPolls = connectionLimits.longPolls { configuration.limits.maxLongPolls = longPolls }
    if let perUser = connectionLimits.longPollsPerUser { configuration.limits.longPollsPerUser = perUser }
}

let started: ServerBootstrap.Running
do {
    if dev {
        guard configPath == nil else { fail("--dev and --config exclude each other") }
        var (configuration, provider) = try DevelopmentServer.configuration(
            dataDirectory: dataDirectory ?? "./walletvault-data", listen: listen ?? "127.0.0.1:8080")
        if let savesPerHour { configuration.limits.savesPerHour = savesPerHour }
        applyOptions(to: &configuration)
        started = try ServerBootstrap.start(configuration, mountedIssuer: provider, logRequests: !quiet)
    } else {
        guard let configPath else { fail(usage) }
        var configuration = try ServerConfiguration.load(path: configPath)
        if let listen { configuration.listen = listen }
        applyOptions(to: &configuration)
        try configuration.check()
        started = try ServerBootstrap.start(configuration, logRequests: !quiet)
    }
} catch {
    fail(error.description)
}

// Tests and scripts read this line to learn the port when started with port 0.
running = started
let scheme = started.tls ? "https" : "http"
FileHandle.standardOutput.write(Data("walletvault-server listening on \(scheme)://\(started.host):\(started.port)\n".utf8))

dispatchMain()
