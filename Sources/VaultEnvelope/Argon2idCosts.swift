/// Argon2id cost parameters (RFC 9106 §3.1) as an entry stores them, and the limits a reader holds them to.
///
/// A passphrase entry's costs arrive from the server and must be used before anything in the blob can be
/// authenticated, so they are bounded three ways (FORMAT.md §7.3): each cost between `floor` and `ceiling`
/// (`weakParameters`), and per open at most `maxEntriesPerOpen` passphrase entries whose `work` sums to at most
/// `maxWorkPerOpen` (`workLimitExceeded`). All are checked before the first derivation.
public struct Argon2idCosts: Sendable, Hashable, CustomStringConvertible {
    /// Memory in KiB (`m`).
    public let memoryKiB: Int
    /// Passes over memory (`t`).
    public let iterations: Int
    /// Lanes (`p`).
    public let parallelism: Int

    /// Creates costs; nothing is checked until a key is derived with them.
    public init(memoryKiB: Int, iterations: Int, parallelism: Int) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
    }

    /// The floor a reader enforces: 19 MiB and two passes (OWASP's minimum for Argon2id), one lane.
    ///
    /// A server could otherwise lower the costs stored in an entry and make an offline guess cheaper.
    public static let floor = Argon2idCosts(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1)

    /// The ceiling a reader enforces: 256 MiB, 8 passes, 4 lanes.
    ///
    /// 256 MiB is what a mid-range phone can give one derivation without the OS killing the app (iOS apps get
    /// roughly half of a 3–4 GiB device, Android apps are killed well before that); 4 lanes is the big cores a phone
    /// has; 8 passes bounds the time at the ceiling's memory. RFC 9106's second recommended setting (64 MiB, 3 passes),
    /// what new entries use, sits well inside.
    public static let ceiling = Argon2idCosts(memoryKiB: 256 * 1024, iterations: 8, parallelism: 4)

    /// What new passphrase entries use: RFC 9106's second recommended memory (64 MiB) and passes (3), one lane
    /// so phones with few cores are not slower than the floor suggests.
    public static let `default` = Argon2idCosts(memoryKiB: 64 * 1024, iterations: 3, parallelism: 1)

    /// The most passphrase entries one open derives for; a blob with more is refused before any derivation.
    public static let maxEntriesPerOpen = 4

    /// The most `work` (KiB × passes) one open spends, summed over the blob's passphrase entries: four entries at
    /// the default costs, 768 MiB·passes, a few seconds on a phone. A single entry may use all of it
    /// (256 MiB × 3 passes, say), so `m × t` of one entry is bounded by this too, not only by `ceiling`.
    public static let maxWorkPerOpen = 4 * 65536 * 3

    /// `m × t` in KiB·passes, the measure of time and memory traffic that `maxWorkPerOpen` bounds; lanes do not
    /// change it (they split the same memory). Only meaningful for costs within `floor...ceiling`.
    public var work: Int { memoryKiB * iterations }

    /// Whether each cost lies between `floor` and `ceiling`.
    ///
    /// (RFC 9106's `m ≥ 8·p` needs no check of its own: the floor's 19456 KiB is far above 8 × the ceiling's 4 lanes.)
    public var isWithinReaderLimits: Bool {
        (Self.floor.memoryKiB...Self.ceiling.memoryKiB).contains(memoryKiB)
            && (Self.floor.iterations...Self.ceiling.iterations).contains(iterations)
            && (Self.floor.parallelism...Self.ceiling.parallelism).contains(parallelism)
    }

    /// Checks the costs of every passphrase entry one open would derive for, before any derivation.
    ///
    /// - Throws: `VaultEnvelopeError` `.weakParameters` if any entry's costs are outside `floor...ceiling` (the
    ///   whole blob is refused, not the entry skipped), `.workLimitExceeded` for more than `maxEntriesPerOpen`
    ///   entries or a total `work` above `maxWorkPerOpen`.
    static func checkOpenBudget(_ entries: [Argon2idCosts]) throws(VaultEnvelopeError) {
        for costs in entries where !costs.isWithinReaderLimits {
            throw VaultEnvelopeError(.weakParameters, "Argon2id costs \(costs) are outside \(floor) to \(ceiling)")
        }
        guard entries.count <= maxEntriesPerOpen else {
            throw VaultEnvelopeError(
                .workLimitExceeded, "the blob has \(entries.count) passphrase entries; a reader derives for at most \(maxEntriesPerOpen)")
        }
        let total = entries.reduce(0) { $0 + $1.work }
        guard total <= maxWorkPerOpen else {
            throw VaultEnvelopeError(
                .workLimitExceeded, "the passphrase entries need \(total) KiB·passes of Argon2id; a reader spends at most \(maxWorkPerOpen)"
            )
        }
    }

    /// `m=…,t=…,p=…` as in the PHC string format.
    public var description: String { "m=\(memoryKiB),t=\(iterations),p=\(parallelism)" }
}
