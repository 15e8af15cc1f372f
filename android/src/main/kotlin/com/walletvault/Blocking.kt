package com.walletvault

import kotlinx.coroutines.runBlocking

/**
 * Runs a suspend function to completion, blocking the calling thread until it ends: for callers without coroutines
 * (Java code, command-line tools, tests). Never on Android's main thread; apps call the suspend functions from a
 * coroutine instead. Throws what [block] throws.
 */
fun <T> runSuspending(block: suspend () -> T): T = runBlocking { block() }
