// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Heap bytes for secrets (keys, shared secrets, derived keys) that are wiped with `OPENSSL_cleanse` on release.
    ///
    /// `@unchecked Sendable`: the bytes are written only inside `init` and are read-only afterwards.
    final class SecureBytes: @unchecked Sendable {
        private let buffer: UnsafeMutableRawBufferPointer

        /// Allocates `count` bytes and lets `initializer` fill them; wipes and frees them if it throws.
        init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            let visible = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            visible.initializeMemory(as: UInt8.self, repeating: 0)
            do {
                try initializer(visible)
            } catch {
                OPENSSL_cleanse(buffer.baseAddress, buffer.count)
                buffer.deallocate()
                throw error
            }
            self.buffer = visible
        }

        /// Copies `bytes`.
        convenience init(copying bytes: some DataProtocol) {
            // Region by region: DataProtocol's generic copyBytes(to:) walks a Slice<Data> byte by byte.
            self.init(count: bytes.count) { output in
                var offset = 0
                for region in bytes.regions {
                    region.withUnsafeBytes { source in
                        UnsafeMutableRawBufferPointer(rebasing: output[offset...]).copyMemory(from: source)
                        offset += source.count
                    }
                }
            }
        }

        deinit {
            // `buffer` may be a zero-length view of a one-byte allocation; its base address is the allocation.
            OPENSSL_cleanse(buffer.baseAddress, buffer.count)
            buffer.baseAddress?.deallocate()
        }

        var count: Int { buffer.count }

        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try body(UnsafeRawBufferPointer(buffer))
        }
    }
#endif
