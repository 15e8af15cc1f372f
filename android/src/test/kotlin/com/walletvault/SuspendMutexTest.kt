package com.walletvault

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** [SuspendMutex]: a caller cancelled as it takes the lock never keeps it (every engine operation would hang after). */
class SuspendMutexTest {
    @Test
    fun aCallerCancelledOnTheWayInDoesNotKeepTheLock() = runBlocking {
        val mutex = SuspendMutex()
        val job = launch(Dispatchers.Default) {
            // The cancellation that races the entry, made certain: the job is cancelling before lock() runs.
            coroutineContext[Job]!!.cancel()
            mutex.lock()
        }
        job.join()
        assertTrue(job.isCancelled)
        withTimeout(5_000) { mutex.lock() }
        mutex.unlock()
    }
}
