import Foundation
import VaultCrypto

/// A recovery code: 140 random bits written as 7 groups of 5 Crockford base32 characters, the fifth of each group
/// a check character, e.g. `7K3QD-...`.
///
/// Each check character is Luhn mod 32 over the group's position and its four characters, so any single mistyped
/// character, most swaps of neighbours and a group typed in the wrong place are caught, and the error names the group.
public struct RecoveryCode: Sendable, CustomStringConvertible {
    /// Crockford's base32 alphabet: no I, L, O or U, so nothing reads as another character.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    /// Groups in a code.
    public static let groupCount = 7
    /// Random characters per group (5 bits each): 7 × 4 × 5 = 140 bits.
    public static let dataCharactersPerGroup = 4

    /// The 28 random characters in canonical spelling (upper case, no check characters), kept in wiped memory.
    let canonical: SymmetricKey

    /// Generates a code from 140 bits of the system CSPRNG.
    public static func generate() -> RecoveryCode {
        var random = SecureRandom.bytes(count: 18)
        defer { random.resetBytes(in: random.startIndex..<random.endIndex) }
        var symbols = [UInt8](repeating: 0, count: groupCount * dataCharactersPerGroup)
        for index in symbols.indices {
            // Symbol i is bits 5i..<5i+5 of the random bytes, most significant bit first.
            let bit = index * 5
            let window = (UInt16(random[bit / 8]) << 8) | UInt16(random[bit / 8 + 1])
            symbols[index] = alphabet[Int((window >> (11 - UInt16(bit % 8))) & 0x1F)]
        }
        defer { for index in symbols.indices { symbols[index] = 0 } }
        return RecoveryCode(canonical: SymmetricKey(data: symbols))
    }

    private init(canonical: SymmetricKey) {
        self.canonical = canonical
    }

    /// What a reader skips in a typed or pasted code: `-`, space, tab, line feed, carriage return and no-break space
    /// (U+00A0, which copying from a web page or PDF produces). Nothing else is skipped (FORMAT.md §7.4).
    static let ignoredScalars: Set<Unicode.Scalar> = ["-", " ", "\t", "\n", "\r", "\u{A0}"]

    /// Reads a code as a person typed it: case does not matter, the characters in `ignoredScalars` are skipped,
    /// `O` reads as `0` and `I`/`L` as `1`.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidRecoveryCode` for a character outside the alphabet (`U`, non-ASCII
    ///   letters and digits among them), a number of characters other than 35, or groups whose check character does
    ///   not match (named, counting from 1).
    public init(parsing text: String) throws(VaultEnvelopeError) {
        var symbols: [UInt8] = []
        defer { for index in symbols.indices { symbols[index] = 0 } }
        for scalar in text.unicodeScalars {
            if Self.ignoredScalars.contains(scalar) { continue }
            guard scalar.isASCII else {
                throw VaultEnvelopeError(.invalidRecoveryCode, "a recovery code uses only 0-9 and A-Z without U")
            }
            let byte = UInt8(scalar.value)
            switch byte {
            case UInt8(ascii: "O"), UInt8(ascii: "o"): symbols.append(0)
            case UInt8(ascii: "I"), UInt8(ascii: "i"), UInt8(ascii: "L"), UInt8(ascii: "l"): symbols.append(1)
            default:
                let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
                guard let value = Self.alphabet.firstIndex(of: upper) else {
                    throw VaultEnvelopeError(.invalidRecoveryCode, "a recovery code uses only 0-9 and A-Z without U")
                }
                symbols.append(UInt8(value))
            }
        }
        let groupLength = Self.dataCharactersPerGroup + 1
        guard symbols.count == Self.groupCount * groupLength else {
            throw VaultEnvelopeError(
                .invalidRecoveryCode, "a recovery code has \(Self.groupCount) groups of \(groupLength) characters")
        }
        var mistyped: [Int] = []
        var canonical: [UInt8] = []
        defer { for index in canonical.indices { canonical[index] = 0 } }
        for group in 0..<Self.groupCount {
            let characters = symbols[group * groupLength..<(group + 1) * groupLength]
            if !Self.luhnValid([UInt8(group)] + characters) { mistyped.append(group + 1) }
            canonical += characters.dropLast().map { Self.alphabet[Int($0)] }
        }
        guard mistyped.isEmpty else {
            let groups = mistyped.map(String.init).joined(separator: ", ")
            throw VaultEnvelopeError(.invalidRecoveryCode, "group \(groups) does not match its check character")
        }
        self.canonical = SymmetricKey(data: canonical)
    }

    /// The code as shown to the user: `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX`.
    public var formatted: String {
        canonical.withUnsafeBytes { characters in
            (0..<Self.groupCount).map { group in
                let data = characters[group * Self.dataCharactersPerGroup..<(group + 1) * Self.dataCharactersPerGroup]
                let values = data.map { UInt8(Self.alphabet.firstIndex(of: $0)!) }
                let check = Self.alphabet[Int(Self.luhnCheck([UInt8(group)] + values))]
                return String(decoding: Array(data) + [check], as: UTF8.self)
            }.joined(separator: "-")
        }
    }

    /// Never the code itself.
    public var description: String { "RecoveryCode(\(Self.groupCount) groups)" }

    /// Calls `body` with the 28 canonical data characters (ASCII), the input keying material of the recovery key.
    func withCanonicalBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try canonical.withUnsafeBytes(body)
    }

    // Luhn mod N (N = 32): doubling with digit sum in base 32 is a permutation, so one changed symbol always shows.
    private static func luhnSum(_ values: some BidirectionalCollection<UInt8>, doubleFirst: Bool) -> Int {
        var double = doubleFirst
        var sum = 0
        for value in values.reversed() {
            let addend = Int(value) * (double ? 2 : 1)
            sum += addend / 32 + addend % 32
            double.toggle()
        }
        return sum
    }

    static func luhnCheck(_ values: [UInt8]) -> UInt8 {
        UInt8((32 - luhnSum(values, doubleFirst: true) % 32) % 32)
    }

    static func luhnValid(_ values: [UInt8]) -> Bool {
        luhnSum(values, doubleFirst: false) % 32 == 0
    }
}
