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
}
