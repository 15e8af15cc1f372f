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

    /// Opens the checkpointing connection to the database at `path`.
    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Whether the log is so long the writer should checkpoint before going on.
    var mustCheckpointNow: Bool { logFrames.load(ordering: .relaxed) >= Self.blockingFrames }

    /// Called by the writer after each commit with the log's length; schedules a checkpoint past the threshold.
    func committed(logFrames frames: Int) {
        logFrames.store(frames, ordering: .relaxed)
        // A shorter log than at the last checkpoint has been restarted from its beginning.
        let since = frames - (frames < framesAtLastCheckpoint.load(ordering: .relaxed) ? 0 : framesAtLastCheckpoint.load(ordering: .relaxed))
        guard since >= Self.backgroundFrames, !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        framesAtLastCheckpoint.store(frames, ordering: .relaxed)
        queue.async { [self] in
            // A failed passive checkpoint loses nothing: the frames stay in the log for the next one.
            try? connection.checkpointPassively()
            scheduled.store(false, ordering: .releasing)
        }
    }

    /// Waits for a running checkpoint to finish; the store calls this before closing.
    func drain() {
        queue.sync {}
    }
}
