package com.walletvault

import java.util.concurrent.CountDownLatch
import kotlin.coroutines.Continuation
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.startCoroutine

/**
 * Runs a suspend function to completion on the calling thread's behalf, for callers without kotlinx-coroutines
 * (Java code, command-line tools, tests). Apps with coroutines call the suspend functions directly.
 */
fun <T> runSuspending(block: suspend () -> T): T = runSuspending(EmptyCoroutineContext, block)

/** As [runSuspending], with [context] (for example a [Cancellation]) as the coroutine's context. */
fun <T> runSuspending(context: kotlin.coroutines.CoroutineContext, block: suspend () -> T): T {
    val latch = CountDownLatch(1)
    var value: Any? = null
    var failure: Throwable? = null
    block.startCoroutine(Continuation(context) { result ->
        result.fold({ value = it }, { failure = it })
        latch.countDown()
    })
    latch.await()
    failure?.let { throw it }
    @Suppress("UNCHECKED_CAST")
    return value as T
}
