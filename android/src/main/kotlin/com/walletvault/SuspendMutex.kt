package com.walletvault

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.suspendCancellableCoroutine
import java.util.ArrayDeque
import java.util.concurrent.CancellationException
import kotlin.coroutines.resume

/**
 * A first-come-first-served mutex for suspend functions: waiting blocks no thread and ends with CancellationException
 * when the waiter is cancelled. kotlinx's `Mutex` would do, but Debian's build of kotlinx-coroutines 1.0.1 fails its
 * contended path (`NoSuchFieldError: _state`, an AtomicFU transformation missing from the package).
 */
internal class SuspendMutex {
    private class Waiter(val continuation: CancellableContinuation<Unit>) {
        /** Set under the lock when [unlock] hands the mutex to this waiter. */
        var granted = false
    }

    private val lock = Any()
    private var locked = false
    private val waiters = ArrayDeque<Waiter>()

    /**
     * Acquires the mutex, suspending while another holds it. Throws CancellationException when cancelled meanwhile,
     * and then never holds the mutex.
     */
    suspend fun lock() {
        var waiter: Waiter? = null
        var acquired = false
        try {
            suspendCancellableCoroutine<Unit> { continuation ->
                acquired = synchronized(lock) {
                    if (!locked) { locked = true; true } else { waiter = Waiter(continuation).also { waiters.addLast(it) }; false }
                }
                if (acquired) continuation.resume(Unit)
            }
        } catch (e: CancellationException) {
            // A continuation whose job is already cancelling (or, in kotlinx 1.x, stops being active before the
            // result is read) throws even after the uncontended path took the mutex; a hand-off that raced the
            // cancellation is in the same state. Either is passed on, never kept: nobody would ever unlock it.
            val mine = waiter
            if (acquired || mine != null && synchronized(lock) { if (mine.granted) true else { waiters.remove(mine); false } }) unlock()
            throw e
        }
    }

    /** Releases the mutex, handing it to the longest waiter if there is one. */
    fun unlock() {
        val next = synchronized(lock) { waiters.pollFirst()?.also { it.granted = true } ?: run { locked = false; null } }
        next?.continuation?.resume(Unit)
    }

    /** Runs [block] holding the mutex. Throws what [block] throws, CancellationException when cancelled while waiting. */
    suspend fun <T> withLock(block: suspend () -> T): T {
        lock()
        try { return block() } finally { unlock() }
    }
}
