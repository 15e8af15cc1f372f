import CBase64URL
import Foundation

/// Base64url without padding (RFC 4648 §5), strict on input.
///
/// Decoding refuses padding, the `+` and `/` alphabet, whitespace and encodings whose unused
/// trailing bits are not zero, so that every byte string has exactly one accepted spelling.
///
/// A vault's ciphertext runs to megabytes and is coded on every seal, open and save. On CPUs with
/// AVX2 the bulk goes through the vector loops of `CBase64URL`; the rest, and everything elsewhere,
/// through table loops on raw buffers: twelve bits to two letters when encoding, one pre-shifted
/// table per letter position when decoding (the layout of Nick Galbreath's modp_b64).
public enum Base64URL {
    /// The number of letters `byteCount` bytes encode to.
    public static func encodedCount(ofByteCount byteCount: Int) -> Int {
        byteCount / 3 * 4 + [0, 2, 3][byteCount % 3]
    }

    /// Encodes bytes as unpadded base64url.
    public static func encode<D: DataProtocol>(_ bytes: D) -> String {
        if let string = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) {
            return string
        }
        return Data(bytes).withUnsafeBytes { encode($0) }
    }

    /// Encodes the bytes of a raw buffer as unpadded base64url.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedCount(ofByteCount: bytes.count)) { output in
            encode(bytes, into: UnsafeMutableRawBufferPointer(output))
            return output.count
        }
    }

    /// Writes the base64url letters of `bytes` at the start of `output`, which must hold
    /// `encodedCount(ofByteCount: bytes.count)` bytes.
    public static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        let count = bytes.count
        precondition(output.count >= encodedCount(ofByteCount: count), "base64url output buffer too small")
        guard count > 0, let input = bytes.baseAddress, let out = output.baseAddress else { return }
        letterPairs.withUnsafeBufferPointer { pairs in
            var read = wv_base64url_encode_bulk(input.assumingMemoryBound(to: UInt8.self), count, out.assumingMemoryBound(to: UInt8.self))
            var written = read / 3 * 4
            // Eight bytes loaded, six used: four lookups of twelve bits give eight letters.
            while read + 8 <= count {
                let word = UInt64(bigEndian: input.loadUnaligned(fromByteOffset: read, as: UInt64.self))
                let letters =
                    UInt64(pairs[Int(truncatingIfNeeded: word >> 52)])
                    | UInt64(pairs[Int(truncatingIfNeeded: (word >> 40) & 0xFFF)]) << 16
                    | UInt64(pairs[Int(truncatingIfNeeded: (word >> 28) & 0xFFF)]) << 32
                    | UInt64(pairs[Int(truncatingIfNeeded: (word >> 16) & 0xFFF)]) << 48
                out.storeBytes(of: letters.littleEndian, toByteOffset: written, as: UInt64.self)
                read += 6
                written += 8
            }
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            let letters = out.assumingMemoryBound(to: UInt8.self)
            while read + 3 <= count {
                let group = Int(bytes[read]) << 16 | Int(bytes[read + 1]) << 8 | Int(bytes[read + 2])
                writePair(pairs[group >> 12], to: letters + written)
                writePair(pairs[group & 0xFFF], to: letters + written + 2)
                read += 3
                written += 4
            }
            switch count - read {
            case 1:
                writePair(pairs[Int(bytes[read]) << 4], to: letters + written)
            case 2:
                let group = Int(bytes[read]) << 10 | Int(bytes[read + 1]) << 2
                writePair(pairs[group >> 6], to: letters + written)
                letters[written + 2] = alphabet[(group & 0x3F)]
            default:
                break
            }
        }
    }

    /// Decodes unpadded base64url; returns nil for anything that is not its canonical spelling.
    public static func decode(_ text: String) -> Data? {
        decode(Substring(text))
    }

    /// Decodes unpadded base64url from a substring; returns nil for anything non-canonical.
    public static func decode(_ text: Substring) -> Data? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes unpadded base64url letters held in a raw buffer; returns nil for anything non-canonical.
    public static func decode(_ letters: UnsafeRawBufferPointer) -> Data? {
        guard let byteCount = decodedCount(ofLetterCount: letters.count) else { return nil }
        guard byteCount > 0 else { return Data() }
        // Uninitialized memory handed to Data as is: Data(count:) would first zero a megabyte-sized ciphertext.
        let output = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16)
        guard decode(letters, into: UnsafeMutableRawBufferPointer(start: output, count: byteCount)) else {
            output.deallocate()
            return nil
        }
        return Data(bytesNoCopy: output, count: byteCount, deallocator: .custom { memory, _ in memory.deallocate() })
    }

    /// The number of bytes `letterCount` letters decode to, or nil when no canonical encoding has that length.
    public static func decodedCount(ofLetterCount letterCount: Int) -> Int? {
        letterCount % 4 == 1 ? nil : letterCount / 4 * 3 + [0, 0, 1, 2][letterCount % 4]
    }

    /// Checks that `text` is canonical unpadded base64url and returns how many bytes it decodes to, without decoding.
    ///
    /// The server needs only this of a vault's ciphertext: that it is well formed, and its size.
    public static func decodedCount(ofValid text: String) -> Int? {
        var text = text
        return text.withUTF8 { utf8 -> Int? in
            let letters = UnsafeRawBufferPointer(utf8)
            guard let byteCount = decodedCount(ofLetterCount: letters.count) else { return nil }
            return isCanonical(letters) ? byteCount : nil
        }
    }

    /// Decodes `letters` into the start of `output`, which must hold `decodedCount(ofLetterCount:)` bytes;
    /// false, with `output` partly written, when the letters are not canonical base64url.
    public static func decode(_ letters: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let byteCount = decodedCount(ofLetterCount: letters.count) else { return false }
        precondition(output.count >= byteCount, "base64url output buffer too small")
        guard byteCount > 0, let input = letters.baseAddress, let out = output.baseAddress else { return true }
        return decodingTables.withUnsafeBufferPointer { tables in
            let first = tables.baseAddress!
            let second = first + 256
            let third = first + 512
            let fourth = first + 768
            let text = input.assumingMemoryBound(to: UInt8.self)
            var invalid: Int32 = 0
            var read = wv_base64url_decode_bulk(text, letters.count, out.assumingMemoryBound(to: UInt8.self), byteCount, &invalid)
            var written = read / 4 * 3
            var flags: UInt32 = invalid == 0 ? 0 : invalidFlag
            func group(at offset: Int) -> UInt32 {
                first[Int(text[offset])] | second[Int(text[offset + 1])] | third[Int(text[offset + 2])]
                    | fourth[Int(text[offset + 3])]
            }
            // Eight letters give six bytes, stored as one eight-byte word whose last two bytes the next
            // store overwrites; so this runs while two bytes of room remain past the six.
            while read + 8 <= letters.count && written + 8 <= byteCount {
                let high = group(at: read)
                let low = group(at: read + 4)
                flags |= high | low
                let word = (UInt64(high) << 40 | UInt64(low) << 16)
                out.storeBytes(of: word.bigEndian, toByteOffset: written, as: UInt64.self)
                read += 8
                written += 6
            }
            let bytes = out.assumingMemoryBound(to: UInt8.self)
            while read + 4 <= letters.count {
                let value = group(at: read)
                flags |= value
                bytes[written] = UInt8(truncatingIfNeeded: value >> 16)
                bytes[written + 1] = UInt8(truncatingIfNeeded: value >> 8)
                bytes[written + 2] = UInt8(truncatingIfNeeded: value)
                read += 4
                written += 3
            }
            let tail = letters.count - read
            if tail >= 2 {
                // The missing letters count as zeros; the last one present must carry no set unused bits.
                let last = fourth[Int(text[letters.count - 1])]
                flags |= last & (tail == 2 ? 0x0F : 0x03) == 0 ? 0 : invalidFlag
                var value = first[Int(text[read])] | second[Int(text[read + 1])]
                if tail == 3 { value |= third[Int(text[read + 2])] }
                flags |= value
                bytes[written] = UInt8(truncatingIfNeeded: value >> 16)
                if tail == 3 { bytes[written + 1] = UInt8(truncatingIfNeeded: value >> 8) }
            }
            return flags & invalidFlag == 0
        }
    }

    /// Whether every letter is in the base64url alphabet and a 2- or 3-letter tail sets no unused bits.
    private static func isCanonical(_ letters: UnsafeRawBufferPointer) -> Bool {
        guard let input = letters.baseAddress else { return true }
        return decodingTables.withUnsafeBufferPointer { tables in
            let values = tables.baseAddress! + 768
            let text = input.assumingMemoryBound(to: UInt8.self)
            var invalid: Int32 = 0
            let checked = wv_base64url_check_bulk(text, letters.count, &invalid)
            var flags: UInt32 = invalid == 0 ? 0 : invalidFlag
            for index in checked..<letters.count { flags |= values[Int(text[index])] }
            let tail = letters.count % 4
            if tail >= 2 { flags |= values[Int(text[letters.count - 1])] & (tail == 2 ? 0x0F : 0x03) == 0 ? 0 : invalidFlag }
            return flags & invalidFlag == 0
        }
    }

    @inline(__always)
    private static func writePair(_ pair: UInt16, to destination: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(destination).storeBytes(of: pair.littleEndian, as: UInt16.self)
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Twelve bits → their two letters, the first in the low byte.
    private static let letterPairs: [UInt16] = (0..<4096).map { UInt16(alphabet[$0 >> 6]) | UInt16(alphabet[$0 & 0x3F]) << 8 }

    /// Set in a decoding-table entry for bytes outside the alphabet; above the 24 bits a group decodes to.
    private static let invalidFlag: UInt32 = 1 << 24

    /// Four 256-entry tables, one per letter position in a group of four: the letter's six bits shifted to
    /// their place in the group's 24, or `invalidFlag`.
    private static let decodingTables: [UInt32] = {
        var sextets = [UInt32](repeating: invalidFlag, count: 256)
        for (value, letter) in alphabet.enumerated() { sextets[Int(letter)] = UInt32(value) }
        return [18, 12, 6, 0].flatMap { shift in sextets.map { $0 == invalidFlag ? $0 : $0 << shift } }
    }()
}
