package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

/**
 * Issue 27 point 10: every block of android/README.md marked `<!-- file: PATH -->` is PATH verbatim, so the sample a
 * newcomer copies is the code build.sh compiles against the stubs (and the backup rules the library ships).
 */
class ReadmeSampleTest {
    @Test
    fun everyQuotedFileIsTheFileVerbatim() {
        val readme = File("README.md").readText()
        val quoted = Regex("<!-- file: (\\S+) -->\\n```[a-z]*\\n(.*?)\\n```", RegexOption.DOT_MATCHES_ALL).findAll(readme).toList()
        val paths = quoted.map { it.groupValues[1] }
        assertTrue(paths.containsAll(listOf("src/sample/kotlin/com/walletvault/sample/WalletVaultViewModel.kt",
            "src/sample/kotlin/com/walletvault/sample/WalletVaultActivity.kt", "src/main/res/xml/backup_rules.xml",
            "src/main/res/xml/data_extraction_rules.xml", "src/sample/res/xml/network_security_config.xml")), paths.toString())
        for (block in quoted) {
            val path = block.groupValues[1]
            assertEquals(File(path).readText().trimEnd('\n'), block.groupValues[2], "android/README.md's copy of $path")
        }
    }

    /**
     * The sample's `messageFor` has a branch of its own for every code an app must tell apart (only LOCAL_STORAGE and
     * INVALID_INPUT, a bug or a bad argument, share the generic one): a newcomer copies it. It lacked OFFLINE (no
     * network: the changes stay here) and REMOVED_FROM_VAULT (another device revoked this one: pair again or recover).
     */
    @Test
    fun theSampleTellsEveryFailureAnAppMustHandleApart() {
        val sample = File("src/sample/kotlin/com/walletvault/sample/WalletVaultViewModel.kt").readText()
        val messageFor = sample.substringAfter("private fun messageFor(").substringBefore("\n    }\n")
        val generic = setOf(SyncException.Code.LOCAL_STORAGE, SyncException.Code.INVALID_INPUT)
        val missing = SyncException.Code.values().filter { it !in generic && !Regex("SyncException\\.Code\\.${it.name}\\b").containsMatchIn(messageFor) }
        assertEquals(emptyList<SyncException.Code>(), missing, "codes the sample's messageFor leaves to its generic branch")
    }

    /**
     * The failure table says what the library throws: a device another device removed gets REMOVED_FROM_VAULT (as
     * ParityTest.aRevokedDeviceIsRemovedFromVaultAndNamesTheWriter checks), not the NO_ACCESS the table said.
     */
    @Test
    fun theFailureTableNamesRemovedFromVaultForARevokedDevice() {
        val row = File("README.md").readLines().single { it.startsWith("| another device removed this one |") }
        val says = row.split("|")[2]
        assertTrue(says.contains("`REMOVED_FROM_VAULT`") && !says.contains("NO_ACCESS"), row)
    }
}
