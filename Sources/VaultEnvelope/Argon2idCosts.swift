/// Argon2id cost parameters (RFC 9106 §3.1) as an entry stores them.
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

    /// The ceiling a reader enforces (1 GiB, 16 passes, 16 lanes), so a blob cannot make a reader exhaust memory.
    public static let ceiling = Argon2idCosts(memoryKiB: 1024 * 1024, iterations: 16, parallelism: 16)

    /// What new passphrase entries use: RFC 9106's second recommended memory (64 MiB) and passes (3), one lane
    /// so phones with few cores are not slower than the floor suggests.
    public static let `default` = Argon2idCosts(memoryKiB: 64 * 1024, iterations: 3, parallelism: 1)

    /// Whether each cost lies between `floor` and `ceiling`.
    public var isWithinReaderLimits: Bool {
        (Self.floor.memoryKiB...Self.ceiling.memoryKiB).contains(memoryKiB)
            && (Self.floor.iterations...Self.ceiling.iterations).contains(iterations)
            && (Self.floor.parallelism...Self.ceiling.parallelism).contains(parallelism)
            // RFC 9106 §3.1: at least 8 KiB per lane.
            && memoryKiB >= 8 * parallelism
    }

    /// `m=…,t=…,p=…` as in the PHC string format.
    public var description: String { "m=\(memoryKiB),t=\(iterations),p=\(parallelism)" }
}
