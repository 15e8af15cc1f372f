import Foundation
import VaultEnvelope

/// Reads the files this tool is given and writes the ones it creates (through `OwnerOnlyFile`: 0600, atomic).
enum FileWriter {
    /// Writes `data` to `url` through a temporary file and a rename.
    ///
    /// - Throws: `CLIError` `.localStorage`.
    static func writeAtomically(_ data: Data, to url: URL) throws(CLIError) {
        do throws(VaultEnvelopeError) { try OwnerOnlyFile.replace(url, with: data) } catch {
            throw CLIError(.localStorage, "cannot write \(url.path): check the directory exists and is writable")
        }
    }

    /// Reads a whole file, or standard input for `-`.
    ///
    /// - Throws: `CLIError` `.usage` naming the file.
    static func read(_ path: String) throws(CLIError) -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.usage, "cannot read \(path): check the path and its permissions")
        }
        return data
    }
}
