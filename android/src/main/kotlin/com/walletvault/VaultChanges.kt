package com.walletvault

import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.CancellationException

/** The settings of [VaultSyncEngine.changes] (Swift `VaultSyncEngine.changesWaitSeconds` and its backoff). */
object VaultChanges {
    /**
     * Seconds each long-poll asks the server to hold it, as in Swift: the server's default maximum is 60, and proxies
     * and carrier NATs that cut a silent connection after 30 s do not cut this one.
     */
    const val WAIT_SECONDS = 25
    /** The pause after a first failure that may pass (the network, a 5xx); each failure in a row doubles it. */
    const val FIRST_BACKOFF_MILLIS = 1_000L
    /** The longest pause after failures in a row. */
    const val MAX_BACKOFF_MILLIS = 60_000L

    /** The failures that may pass by themselves: paused on, then tried again; every other one ends [VaultSyncEngine.changes]. */
    internal val RETRIED = setOf(SyncException.Code.SERVER, SyncException.Code.OFFLINE, SyncException.Code.NOT_NOW)
}

/**
 * Takes in the changes other devices save, for as long as the calling coroutine runs, and hands each to [onChange] as
 * [sync] reports it (Swift `VaultSyncEngine.changes()`; kotlinx-coroutines 1.0 has no `Flow`, so a suspend loop).
 *
 * It long-polls the server ([BackupClient.load] with [waitSeconds] and this device's version as `If-None-Match`) and,
 * whenever the stored version moves, runs [sync]: another device's save is restored or merged, a local edit is never
 * overwritten (an edit made while the change is applied is merged on top and stays pending), and the conflict handler
 * is asked when the merge cannot decide. A sync runs first, so pending edits are pushed and the version to wait on is
 * known. A report that changed nothing ([SyncReport.UpToDate]) is not delivered. Failures that may pass (`SERVER`,
 * `OFFLINE`, `NOT_NOW`) pause [VaultChanges.FIRST_BACKOFF_MILLIS], doubling to [VaultChanges.MAX_BACKOFF_MILLIS]; a 429
 * (the server's cap on waiting long-polls) pauses its `Retry-After`. A sync reporting [SyncReport.RateLimited] (this
 * device may not save before its `nextAttemptAt`) is delivered, counts as such a failure, and pauses the longer of the
 * backoff and the time left until `nextAttemptAt`, at most [VaultChanges.MAX_BACKOFF_MILLIS]. A long-poll that finds
 * nothing moved before half [waitSeconds] passed counts as such a failure too, so that a server or proxy that ignores
 * `wait` (an older server, a caching proxy, a server releasing its waiters as it stops) gets paused requests, not a
 * flood; one held at least that long and a sync that succeeds start the backoff over. One that finds a change does not
 * by itself (as in Swift): the sync it leads to decides, so a rate-limited device's backoff still grows although each
 * of its long-polls finds the version it may not yet save over. The times are the engine's [WalletClock]'s, the pauses
 * its sleeps.
 *
 * Cancel the coroutine to stop (an app starts it in `onStart` and cancels the job in `onStop`): the long-poll in flight
 * ends at once (the transport disconnects it), and the call ends with CancellationException. The long-polls run on
 * the engine's I/O dispatcher; [onChange] runs in the caller's context (the main thread for `viewModelScope`), one
 * report at a time, and the next long-poll starts once it returns.
 *
 * Never returns normally. Throws CancellationException when cancelled; [SyncException] for what retrying cannot cure
 * (`NO_ACCESS`, `REMOVED_FROM_VAULT`, `KEY_INVALIDATED`, `ROLLBACK_DETECTED`, `FORK_DETECTED`, `TAMPERED`, `NO_VAULT`
 * when no vault is synced here or the server's was erased, `UNRESOLVED_CONFLICT` without a conflict handler, `SERVER`
 * with [BackupError.Unauthorized]: sign the user in again, then call again, ...),
 * `INVALID_INPUT` for a [waitSeconds] below 1, and `LOCAL_STORAGE` (the cause kept) when [onChange] throws.
 */
suspend fun VaultSyncEngine.changes(waitSeconds: Int = VaultChanges.WAIT_SECONDS, onChange: suspend (SyncReport) -> Unit): Nothing {
    if (waitSeconds < 1) throw SyncException(SyncException.Code.INVALID_INPUT, "a long-poll waits at least 1 s")
    var backoff = VaultChanges.FIRST_BACKOFF_MILLIS
    var syncDue = true
    fun failed() = backoff.also { backoff = minOf(backoff * 2, VaultChanges.MAX_BACKOFF_MILLIS) }
    while (true) {
        yield()
        var report: SyncReport? = null
        var pause: Long? = null
        try {
            if (syncDue) {
                // sync() runs exclusively with the engine's other operations and handles edits made while it awaits.
                report = sync()
                syncDue = false
                if (report is SyncReport.RateLimited) {
                    // The device may not save before nextAttemptAt: without this pause every round would report again.
                    // After it the edits are tried again, rather than waiting for a long-poll: the merged-over
                    // version is the synced one by now, so no long-poll would find a change to start the sync.
                    val left = report.nextAttemptAt - clock.nowMillis()
                    pause = minOf(VaultChanges.MAX_BACKOFF_MILLIS, maxOf(failed(), left))
                    syncDue = true
                } else {
                    backoff = VaultChanges.FIRST_BACKOFF_MILLIS
                }
            } else {
                val asked = clock.nowMillis()
                syncDue = remoteMoved(waitSeconds)
                // Nothing moved and the server did not hold the long-poll for half its wait (waitSeconds * 500 ms): it
                // ignores `wait`, and the next long-poll would come back as soon.
                if (!syncDue && clock.nowMillis() - asked < waitSeconds * 500L) pause = failed()
                // A move found is no success yet (as in Swift): the sync it leads to decides. Otherwise a device whose
                // saves meet the server's cap, and whose every long-poll finds the newer version at once, would start
                // its backoff over each round and sync into the cap as often as the shortest pause allows.
                else if (!syncDue) backoff = VaultChanges.FIRST_BACKOFF_MILLIS
            }
        } catch (e: SyncException) {
            // A cancelled call may fail as a refused request: the cancellation is what ends the loop then.
            yield()
            val limited = e.backupError as? BackupError.RateLimited
            pause = when {
                // At least the first pause: a Retry-After of 0 must not turn the loop into a flood.
                limited != null -> maxOf(limited.retryAfterSeconds * 1000L, VaultChanges.FIRST_BACKOFF_MILLIS)
                // A refused session is not retried: each round would ask the app's OIDC token source again, which
                // may prompt the user; the app signs the user in and calls again.
                e.code in VaultChanges.RETRIED && e.backupError !is BackupError.Unauthorized -> failed()
                else -> throw e
            }
        }
        if (report != null && report !is SyncReport.UpToDate) deliver(report, onChange)
        if (pause != null) clock.sleep(pause)
    }
}

/** Long-polls for a version other than the one synced here; whether one (or an erasure) was found. */
private suspend fun VaultSyncEngine.remoteMoved(waitSeconds: Int): Boolean = withContext(ioDispatcher) {
    val known = status().syncedVersion
        ?: throw SyncException(SyncException.Code.NO_VAULT, "no vault is synced on this device: create, pair or recover first")
    try {
        val snapshot = backup.load(ifNoneMatch = known, waitSeconds = waitSeconds)
        snapshot != null && snapshot.syncId != known
    } catch (e: BackupError.NotFound) {
        true
    } catch (e: BackupError) {
        throw SyncException(if (e is BackupError.Transport) SyncException.Code.OFFLINE else SyncException.Code.SERVER,
            "waiting for changes failed", e)
    } catch (e: CancellationException) {
        // As [VaultSyncEngine.sync]: raw only when this caller was cancelled.
        throw if (callerIsCancelled()) e else SyncException(SyncException.Code.LOCAL_STORAGE, "unexpected ${e.javaClass.simpleName}", cause = e)
    } catch (e: Exception) {
        // The app's own code (its transport or token source) failed otherwise: by class name only, as [sync] reports it.
        throw SyncException(SyncException.Code.LOCAL_STORAGE, "unexpected ${e.javaClass.simpleName}", cause = e)
    }
}

/** Hands [report] to the app's [onChange]; what it throws arrives as a [SyncException], as the engine's rule is. */
private suspend fun deliver(report: SyncReport, onChange: suspend (SyncReport) -> Unit) {
    try {
        onChange(report)
    } catch (e: CancellationException) {
        throw e
    } catch (e: SyncException) {
        throw e
    } catch (e: Exception) {
        throw SyncException(SyncException.Code.LOCAL_STORAGE, "unexpected ${e.javaClass.simpleName} from the change handler", cause = e)
    }
}
