import Foundation
import Testing
import VaultCore

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) })
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
    }

    @Test func refusesNonCanonicalSpellings() {
        // "AB" and "AAB" set unused trailing bits: second spellings of "AA" and "AAA".
        for text in ["AA==", "A", "ab+/", "ab/c", "ab c", "AB\n", "AB", "AAB", "Zm9v!"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
        #expect(Base64URL.decode("AA") == Data([0]))
        #expect(Base64URL.decode("") == Data())
    }

    /// Lengths around the vector loops' strides (24 bytes in, 32 letters in) and a vault-sized one, against
    /// Foundation's standard-alphabet coder.
    @Test func agreesWithFoundationAcrossTheVectorStrides() {
        var generator = SystemRandomNumberGenerator()
        for length in Array(0..<260) + [4095, 4096, 65_536, 1_048_576 + 7] {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let expected = bytes.base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let text = Base64URL.encode(bytes)
            #expect(text == expected, "length \(length)")
            #expect(Base64URL.decode(text) == bytes, "length \(length)")
            #expect(Base64URL.decodedCount(ofValid: text) == length, "length \(length)")
        }
    }

    /// A letter outside the alphabet is caught wherever it falls: in a vector block, in the scalar rest, in the tail.
    @Test func refusesABadLetterAtEveryPosition() {
        let text = Array(Base64URL.encode(Data((0..<150).map { UInt8($0) })).utf8)  // 200 letters
        for position in text.indices {
            for bad in [UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: " "), 0x80, 0xFF, 0] {
                var corrupted = text
                corrupted[position] = bad
                let spelled = String(decoding: corrupted, as: UTF8.self)
                #expect(corrupted.withUnsafeBytes { Base64URL.decode($0) } == nil, "byte \(bad) at \(position)")
                if spelled.utf8.count == corrupted.count {
                    #expect(Base64URL.decodedCount(ofValid: spelled) == nil, "byte \(bad) at \(position)")
                }
            }
        }
    }

    /// The vector loop classifies letters by nibble tables: every one of the 256 byte values, placed where the
    /// vector loop reads it, must be refused exactly when it is not one of the 64 letters.
    @Test func classifiesEveryByteValueInTheVectorLoop() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let text = Array(Base64URL.encode(Data((0..<150).map { UInt8($0) })).utf8)  // 200 letters
        for byte in UInt8.min...UInt8.max {
            for position in [0, 17, 31, 32, 95, 160] {
                var altered = text
                altered[position] = byte
                let decoded = altered.withUnsafeBytes { Base64URL.decode($0) }
                #expect((decoded != nil) == alphabet.contains(byte), "byte \(byte) at \(position)")
                if let decoded {
                    // 200 letters need no padding, so Foundation reads them once the alphabet is swapped.
                    let standard = String(decoding: altered, as: UTF8.self)
                        .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                    #expect(decoded == Data(base64Encoded: standard), "byte \(byte) at \(position)")
                }
            }
        }
    }
}

@Suite struct UTCTimestampTests {
    @Test func parsesAndPrints() {
        #expect(UTCTimestamp(rfc3339: "1970-01-01T00:00:00Z")?.millisecondsSinceEpoch == 0)
        #expect(UTCTimestamp(rfc3339: "2026-08-12T19:00:00.5Z")?.description == "2026-08-12T19:00:00.500Z")
        #expect(UTCTimestamp(rfc3339: "2024-02-29T23:59:59.999+00:00")?.description == "2024-02-29T23:59:59.999Z")
        #expect(UTCTimestamp(rfc3339: "2000-03-01t00:00:00z")?.millisecondsSinceEpoch == 951_868_800_000)
        #expect(UTCTimestamp(millisecondsSinceEpoch: -1).description == "1969-12-31T23:59:59.999Z")
        #expect(UTCTimestamp(millisecondsSinceEpoch: -62_135_596_800_000).description == "0001-01-01T00:00:00.000Z")
        #expect(UTCTimestamp(millisecondsSinceEpoch: 253_402_300_800_000).description == "10000-01-01T00:00:00.000Z")
        #expect(UTCTimestamp(millisecondsSinceEpoch: -62_167_219_200_001).description == "-0001-12-31T23:59:59.999Z")
    }

    @Test func everyPrintedInstantOfYearsOneTo9999ReadsBackAsItself() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let instant = UTCTimestamp(
                millisecondsSinceEpoch: Int64.random(in: -62_135_596_800_000..<253_402_300_800_000, using: &generator))
            let text = instant.description
            #expect(text.utf8.count == 24 && UTCTimestamp(rfc3339: text) == instant, "\(text)")
        }
    }

    @Test func refusesNonUTCAndNonsense() {
        for text in [
            "2026-08-12T19:00:00", "2026-08-12T19:00:00+01:00", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
            "2026-08-12T24:00:00Z", "2026-08-12T19:00:00.Z", "2026-08-12 19:00:00Z", "", "x",
        ] {
            #expect(UTCTimestamp(rfc3339: text) == nil, "\(text)")
        }
    }
}
