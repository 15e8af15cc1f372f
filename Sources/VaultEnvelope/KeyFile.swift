import Foundation

/// Reads key files that only their owner may read (mode 0600), refusing files others can read; `OwnerOnlyFile` writes them.
public enum KeyFile {
    /// Reads `url`, which must be a regular file of at most `maxBytes` that neither group nor others can access.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` if the file is gone (the key was destroyed), `.keyStorage` if it
    ///   is readable by others, not a regular file, too large or unreadable.
    public static func contents(of url: URL, maxBytes: Int) throws(VaultEnvelopeError) -> Data {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw VaultEnvelopeError(.invalidated, "key file \(url.lastPathComponent) no longer exists") }
            throw VaultEnvelopeError(.keyStorage, "cannot open key file \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw VaultEnvelopeError(.keyStorage, "key file \(url.lastPathComponent) is not a regular file")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw VaultEnvelopeError(
                .keyStorage, "key file \(url.lastPathComponent) has mode \(String(status.st_mode & 0o777, radix: 8)), must be 600")
        }
        guard status.st_size <= maxBytes else {
            throw VaultEnvelopeError(.keyStorage, "key file \(url.lastPathComponent) is larger than \(maxBytes) bytes")
        }
        var bytes = Data(count: Int(status.st_size))
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count == bytes.count else {
            throw VaultEnvelopeError(.keyStorage, "cannot read key file \(url.lastPathComponent)")
        }
        return bytes
    }
}
