import Foundation
import Testing

@testable import VaultEnvelope

@Suite struct RecoveryCodeTests {
    static let alphabet = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    @Test func generatedCodesAreSevenGroupsOfFive() {
        let formatted = RecoveryCode.generate().formatted
        let groups = formatted.split(separator: "-")
        #expect(groups.count == 7 && groups.allSatisfy { $0.count == 5 })
        #expect(groups.joined().allSatisfy(Self.alphabet.contains))
        #expect(RecoveryCode.generate().formatted != formatted)
        #expect(!RecoveryCode.generate().description.contains(formatted))
    }

    @Test func everySingleMistypedCharacterIsCaughtAndItsGroupNamed() throws {
        let formatted = Array(RecoveryCode.generate().formatted)
        for position in formatted.indices where formatted[position] != "-" {
            for replacement in Self.alphabet where replacement != formatted[position] {
                var typo = formatted
                typo[position] = replacement
                let group = position / 6 + 1
                #expect { try RecoveryCode(parsing: String(typo)) } throws: { error in
                    (error as? VaultEnvelopeError)?.code == .invalidRecoveryCode
                        && (error as? VaultEnvelopeError)?.reason == "group \(group) does not match its check character"
                }
            }
        }
    }

    @Test func groupsInTheWrongOrderAreCaught() throws {
        var groups = RecoveryCode.generate().formatted.split(separator: "-")
        groups.swapAt(0, 6)
        #expect(throws: VaultEnvelopeError.self) { try RecoveryCode(parsing: groups.joined(separator: "-")) }
    }

    @Test func lenientSpellingParsesToTheSameCode() throws {
        // Find a code with a 0 and a 1 to exercise O→0 and I/L→1.
        var code = RecoveryCode.generate()
        while !(code.formatted.contains("0") && code.formatted.contains("1")) { code = RecoveryCode.generate() }
        let sloppy = code.formatted.replacingOccurrences(of: "0", with: "o").replacingOccurrences(of: "1", with: "l")
            .replacingOccurrences(of: "-", with: "  ").lowercased()
        #expect(try RecoveryCode(parsing: sloppy).formatted == code.formatted)
    }

    @Test func foreignTextIsRefused() {
        for text in ["", "UUUUU-UUUUU-UUUUU-UUUUU-UUUUU-UUUUU-UUUUU", "00000-00000", String(repeating: "0", count: 36)] {
            #expect { try RecoveryCode(parsing: text) } throws: { VaultEnvelopeError.Code.invalidRecoveryCode.matches($0) }
        }
    }
}
