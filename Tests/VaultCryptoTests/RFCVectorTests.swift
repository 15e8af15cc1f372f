import Foundation
import Testing

@testable import VaultCrypto

/// Known-answer tests from RFC 3394, RFC 5649 and RFC 9106, as transcribed in `Fixtures/rfc/`.
@Suite struct RFCVectorTests {
    struct KeyWrapFile: Decodable {
        struct Vector: Decodable {
            let id: String
            let kek, keyData, ciphertext: HexBytes
        }

        let tests: [Vector]
    }

    @Test func rfc3394AESKeyWrap() throws {
        let file: KeyWrapFile = try Fixtures.load("rfc/rfc3394_aes_kw.json")
        #expect(file.tests.count == 6)
        for vector in file.tests {
            let kek = SymmetricKey(data: vector.kek.data)
            #expect(try AES.KeyWrap.wrap(SymmetricKey(data: vector.keyData.data), using: kek) == vector.ciphertext.data, "\(vector.id)")
            #expect(try AES.KeyWrap.unwrap(vector.ciphertext.data, using: kek) == SymmetricKey(data: vector.keyData.data), "\(vector.id)")
        }
    }

    @Test func rfc5649AESKeyWrapWithPadding() throws {
        let file: KeyWrapFile = try Fixtures.load("rfc/rfc5649_aes_kwp.json")
        #expect(file.tests.count == 2)
        for vector in file.tests {
            let kek = SymmetricKey(data: vector.kek.data)
            let keyData = SymmetricKey(data: vector.keyData.data)
            #expect(try AES.KeyWrap.wrapWithPadding(keyData, using: kek) == vector.ciphertext.data, "\(vector.id)")
            #expect(try AES.KeyWrap.unwrapWithPadding(vector.ciphertext.data, using: kek) == keyData, "\(vector.id)")
        }
    }

    struct Argon2File: Decodable {
        struct Inputs: Decodable {
            let password_hex, salt_hex, secret_hex, associatedData_hex: String
            let memory_kib, passes, parallelism_lanes, tag_length, version: Int
        }

        struct Vector: Decodable {
            let id, type: String
            let tag: HexBytes
        }

        let common_inputs: Inputs
        let tests: [Vector]
    }

    @Test func rfc9106Argon2() throws {
        let file: Argon2File = try Fixtures.load("rfc/rfc9106_argon2.json")
        let inputs = file.common_inputs
        #expect(inputs.version == 0x13)
        #expect(file.tests.map(\.type) == ["Argon2d", "Argon2i", "Argon2id"])
        for vector in file.tests {
            let variant: Argon2id.Variant =
                switch vector.type {
                case "Argon2d": .d
                case "Argon2i": .i
                default: .id
                }
            let tag = try Argon2id.derive(
                variant,
                password: Data(hex: inputs.password_hex), salt: Data(hex: inputs.salt_hex),
                iterations: inputs.passes, memoryKiB: inputs.memory_kib, parallelism: inputs.parallelism_lanes,
                outputByteCount: inputs.tag_length,
                secret: Data(hex: inputs.secret_hex), associatedData: Data(hex: inputs.associatedData_hex)
            )
            #expect(tag == SymmetricKey(data: vector.tag.data), "RFC 9106 §\(vector.id)")
        }
        // The public Argon2id entry point must agree with §5.3.
        let publicTag = try Argon2id.deriveKey(
            password: Data(hex: inputs.password_hex), salt: Data(hex: inputs.salt_hex),
            iterations: inputs.passes, memoryKiB: inputs.memory_kib, parallelism: inputs.parallelism_lanes,
            outputByteCount: inputs.tag_length,
            secret: Data(hex: inputs.secret_hex), associatedData: Data(hex: inputs.associatedData_hex)
        )
        #expect(publicTag == SymmetricKey(data: file.tests[2].tag.data))
    }
}
