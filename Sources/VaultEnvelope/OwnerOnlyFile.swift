import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one writer of files a device keeps to itself: keys, counters, sealed vault copies, profiles, exports.
///
/// The file is created with mode 0600 in the `open` call itself (`O_CREAT | O_EXCL | O_NOFOLLOW`), so there is no
/// moment in which another user could open it; its bytes are flushed before it is renamed over the old file, and
/// the directory is flushed after, so a crash leaves the old file or the new one, never half of one.
/// (`FileManager.createFile(atPath:contents:attributes:)` sets the mode only after the file exists.)
public enum OwnerOnlyFile {
    /// Creates `url` with mode 0600 and writes `bytes`; never replaces an existing file or follows a link.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file exists or cannot be written (nothing is left behind).
    public static func create(_ url: URL, bytes: some ContiguousBytes) throws(VaultEnvelopeError) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw VaultEnvelopeError(.keyStorage, "cannot create \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let complete = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
        guard complete, fsync(descriptor) == 0 else {
            unlink(url.path)
            throw VaultEnvelopeError(.keyStorage, "cannot write \(url.lastPathComponent)")
        }
    }

    /// Replaces `url` with a new file of mode 0600 holding `bytes`, atomically.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` naming the file when it cannot be written; the old file is then
    ///   unchanged and no temporary file is left.
    public static func replace(_ url: URL, with bytes: some ContiguousBytes) throws(VaultEnvelopeError) {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        try create(temporary, bytes: bytes)
        guard rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw VaultEnvelopeError(.keyStorage, "cannot replace \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        // The rename is durable only once the directory entry is on disk; a failure here leaves a whole file either way.
        let directoryDescriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
