import Dispatch
import Synchronization

/// Folds the write-ahead log into the database file on its own connection and thread, off the save path.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so every few dozen saves
/// one batch would wait while a megabyte of pages is copied and the file synced. Here the commit only
/// notices the log's size; a passive checkpoint, which never blocks the writer or readers, runs beside the
/// next batches, once per `backgroundFrames` new frames. A passive checkpoint cannot restart the log while
/// saves keep arriving, so the log grows until `blockingFrames`; there the writer runs one restarting
/// checkpoint itself, which has only the frames since the last passive one left to copy.
final class SQLiteCheckpointer: Sendable {
    /// Log size, in frames (pages), that starts a background checkpoint: SQLite's own default threshold.
    static let backgroundFrames = 1000
    /// Log size at which the writer checkpoints itself.
    static let blockingFrames = 10_000

    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "walletvault.sqlite.checkpoint")
    private let scheduled = Atomic<Bool>(false)
    private let logFrames = Atomic<Int>(0)
    /// The log's length when the last checkpoint was scheduled.
    private let framesAtLastCheckpoint = Atomic<Int>(0)

    /// Creates a checkpointer that works through `connection`, a connection of its own to the database.
    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Called by the writer after each commit with the log's length; schedules a checkpoint past the threshold.
    func committed(logFrames frames: Int) {
        logFrames.store(frames, ordering: .relaxed)
        let last = framesAtLastCheckpoint.load(ordering: .relaxed)
        // A shorter log than at the last checkpoint has been restarted from its beginning.
        let since = frames < last ? frames : frames - last
        guard since >= Self.backgroundFrames, !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        framesAtLastCheckpoint.store(frames, ordering: .relaxed)
        queue.async { [self] in
            // A failed passive checkpoint loses nothing: the frames stay in the log for the next one.
            try? connection.checkpoint(.passive)
            scheduled.store(false, ordering: .releasing)
        }
    }

    /// Run by the writer after a batch: past `blockingFrames` it checkpoints and restarts the log itself.
    func restartLogIfTooLong(with writer: SQLiteConnection) {
        guard logFrames.load(ordering: .relaxed) >= Self.blockingFrames else { return }
        // Failing here leaves the log long, not the data at risk; the next batch tries again.
        try? writer.checkpoint(.restart)
    }

    /// Waits for a running checkpoint to finish; the store calls this before closing.
    func drain() {
        queue.sync {}
    }
}
