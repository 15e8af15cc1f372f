import Foundation
import Synchronization

/// A stored body as an open file: `length` bytes from `offset`, for a transport to send from the page cache
/// (`sendfile`) without reading them into the process.
///
/// It owns its descriptor until `takeDescriptor()` hands it over, and closes it when released otherwise. A store names
/// a file in a row only once the file is complete and synced, and never writes it again, so every read through the
/// descriptor sees the whole body, even after its version is trimmed or erased (an unlinked file stays readable
/// through a descriptor opened before).
public final class BlobFile: Sendable {
    /// Where the body starts in the file.
    public let offset: Int64
    /// The body's length in bytes.
    public let length: Int
    /// The open descriptor, -1 once taken.
    private let descriptor: Mutex<Int32>

    /// Takes ownership of `descriptor`, open for reading, whose bytes `offset..<offset+length` are the body.
    init(descriptor: Int32, offset: Int64, length: Int) {
        self.descriptor = Mutex(descriptor)
        self.offset = offset
        self.length = length
    }

    deinit {
        let open = descriptor.withLock { $0 }
        if open >= 0 { close(open) }
    }

    /// Hands the descriptor over (the caller closes it from then on); nil when it was taken before.
    public func takeDescriptor() -> Int32? {
        descriptor.withLock { open in
            defer { open = -1 }
            return open >= 0 ? open : nil
        }
    }

    /// The body's bytes, read into memory: for callers off the serving path (tests, tools), which send nothing.
    ///
    /// - Throws: `StoreError` when the descriptor was handed over or the file cannot be read in full.
    public func read() throws(StoreError) -> Data {
        try descriptor.withLock { open throws(StoreError) -> Data in
            guard open >= 0 else { throw StoreError(.unavailable, "the body's descriptor was handed over") }
            guard length > 0 else { return Data() }
            var bytes = Data(count: length)
            let done = bytes.withUnsafeMutableBytes { buffer -> Bool in
                var read = 0
                while read < length {
                    let count = pread(open, buffer.baseAddress! + read, length - read, off_t(offset) + off_t(read))
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return false }
                    read += count
                }
                return true
            }
            guard done else { throw StoreError(.unavailable, "a body file ended before its \(length) bytes") }
            return bytes
        }
    }
}
