import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's own standard streams; secrets are read with echo turned off through termios.
public struct SystemTerminal: Terminal {
    /// Creates the terminal over file descriptors 0, 1 and 2.
    public init() {}

    public var isInteractive: Bool { isatty(0) == 1 }
    public var showsProgress: Bool { isatty(2) == 1 }

    public func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    public func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    public func readLine(prompt: String) -> String? {
        writeError(prompt)
        return Swift.readLine(strippingNewline: true)
    }

    public func readSecret(prompt: String) -> String? {
        guard isInteractive else { return nil }
        writeError(prompt)
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { return nil }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Restore echo even if reading fails: a terminal left silent looks broken to the user.
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            writeError("\n")
        }
        guard tcsetattr(0, TCSAFLUSH, &silent) == 0 else { return nil }
        return Swift.readLine(strippingNewline: true)
    }
}
