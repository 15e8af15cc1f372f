package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.io.File

/**
 * A crash or an I/O error between the files one local commit writes (working copy, merge base, synced blob, sync
 * record) must leave a profile whose next sync loses no device's edit and undoes no decision (the Swift SDK's
 * InterruptedCommitTests).
 *
 * A file that cannot be replaced (a non-empty directory in its place) makes that write fail; putting the old file
 * back then leaves exactly what a crash just before that write would: the earlier writes done, it and the later not.
 */
class InterruptedCommitTest {
    private val server = FakeServer()
    private val clock = FakeClock()
    private val keys = TestDeviceKeys()

    /** One of a profile's sealed files, made unwritable and later put back as it was. */
    private class BrokenFile(name: String, directory: File) {
        private val file = File(directory, "$name.sealed")
        private var old: ByteArray? = null

        fun breakIt() {
            old = if (file.exists()) file.readBytes() else null
            file.delete()
            check(file.mkdir())
            File(file, "blocker").writeBytes(ByteArray(0))
        }

        fun mend() {
            check(file.deleteRecursively())
            old?.let { file.writeBytes(it) }
        }
    }

    /** A created with an item, B restored from it: two profiles sharing one device key. */
    private fun pair(handlerOfB: (suspend (ConflictContext) -> ConflictResolution)? = null): Pair<TestProfile, TestProfile> {
        val a = TestProfile(clock, server, keys)
        val b = TestProfile(clock, server, keys, handler = handlerOfB)
        runSuspending { a.engine.createVault() }
        a.set("passport", "P-1")
        a.sync()
        b.sync()
        assertEquals("P-1", b.value("passport"))
        return Pair(a, b)
    }

    @ParameterizedTest
    @ValueSource(strings = ["working", "synced", "synced-blob", "record"])
    fun aMergedSaveWhoseCommitIsCutShortRevertsNoOtherDevicesEdit(failing: String) {
        val (a, b) = pair()
        a.set("licence", "from A")
        a.sync()
        b.set("card", "from B")
        val broken = BrokenFile(failing, b.directory)
        server.beforeSaveStored = { server.beforeSaveStored = null; broken.breakIt() }
        expectSyncFailure(SyncException.Code.LOCAL_STORAGE) { b.sync() }
        broken.mend()
        b.sync()
        a.sync()
        assertEquals("from B", a.value("card"), "B's edit was lost")
        assertEquals("from A", a.value("licence"), "B's next save reverted A's edit")
        assertEquals("from A", b.value("licence"))
    }

    @ParameterizedTest
    @ValueSource(strings = ["working", "synced", "synced-blob", "record"])
    fun keepingTheCloudsVersionStaysKeptWhenItsCommitIsCutShort(failing: String) {
        var whileTheUserDecides: () -> Unit = {}
        // The prompt is the last wait before the commit: the file breaks while the user decides.
        val (a, b) = pair { _ -> whileTheUserDecides(); ConflictResolution.KEEP_CLOUD }
        val broken = BrokenFile(failing, b.directory)
        whileTheUserDecides = { broken.breakIt() }
        a.set("passport", "from A")
        a.sync()
        b.set("passport", "from B")
        expectSyncFailure(SyncException.Code.LOCAL_STORAGE) { b.sync() }
        whileTheUserDecides = {}
        broken.mend()
        b.sync()
        a.sync()
        assertEquals("from A", a.value("passport"), "the cloud's version was chosen, yet B's replaced it")
        assertEquals("from A", b.value("passport"))
    }

    @Test
    fun anEditWhoseBookkeepingCannotBeWrittenIsNotShownAsMade() {
        val (a, b) = pair()
        val broken = BrokenFile("record", b.directory)
        broken.breakIt()
        expectSyncFailure(SyncException.Code.LOCAL_STORAGE) { b.set("card", "from B") }
        broken.mend()
        b.sync()
        a.sync()
        assertEquals(a.engine.document()?.liveValues, b.engine.document()?.liveValues, "B shows an edit that no sync will ever save")
    }
}
