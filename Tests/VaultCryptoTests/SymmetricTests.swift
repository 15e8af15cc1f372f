import CVaultCryptoShims
import Foundation
import Testing

@testable import VaultCrypto

@Suite struct AESGCMTests {
    let key = SymmetricKey(size: .bits256)
    let message = Data("vault item #1".utf8)
    let aad = Data("item-id=1;version=3".utf8)

    @Test func sealOpenRoundTripWithAAD() throws {
        let box = try AES.GCM.seal(message, using: key, authenticating: aad)
        #expect(box.ciphertext.count == message.count && box.tag.count == 16)
        #expect(box.ciphertext != message)
        #expect(try AES.GCM.open(box, using: key, authenticating: aad) == message)
        let combined = try #require(box.combined)
        let reassembled = try AES.GCM.SealedBox(combined: combined)
        #expect(try AES.GCM.open(reassembled, using: key, authenticating: aad) == message)
        #expect(combined.count == 12 + message.count + 16)
    }

    @Test func freshNoncePerSeal() throws {
        let first = try AES.GCM.seal(message, using: key)
        let second = try AES.GCM.seal(message, using: key)
        #expect(first.nonce != second.nonce)
        #expect(first.ciphertext != second.ciphertext)
        #expect(try AES.GCM.open(first, using: key) == message)
    }

    @Test func anyChangeIsAnAuthenticationFailure() throws {
        let box = try AES.GCM.seal(message, using: key, authenticating: aad)
        var ciphertext = box.ciphertext
        ciphertext[0] ^= 1
        var tag = box.tag
        tag[15] ^= 0x80
        let otherNonce = try AES.GCM.Nonce(data: Data(count: 12))
        let forgeries: [(AES.GCM.SealedBox, SymmetricKey, Data)] = [
            (box, key, Data("item-id=2;version=3".utf8)),
            (box, SymmetricKey(size: .bits256), aad),
            (try AES.GCM.SealedBox(nonce: box.nonce, ciphertext: ciphertext, tag: box.tag), key, aad),
            (try AES.GCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext, tag: tag), key, aad),
            (try AES.GCM.SealedBox(nonce: otherNonce, ciphertext: box.ciphertext, tag: box.tag), key, aad),
        ]
        for (forged, forgedKey, forgedAAD) in forgeries {
            #expect { try AES.GCM.open(forged, using: forgedKey, authenticating: forgedAAD) } throws: {
                ($0 as? CryptoError)?.code == .authenticationFailure
            }
        }
    }

    @Test func malformedInputsAreRefused() throws {
        #expect { try AES.GCM.seal(message, using: SymmetricKey(size: SymmetricKeySize(bitCount: 512))) } throws: {
            ($0 as? CryptoError)?.code == .invalidKeySize
        }
        #expect(throws: CryptoError.self) { try AES.GCM.Nonce(data: Data(count: 16)) }
        #expect(throws: CryptoError.self) { try AES.GCM.SealedBox(combined: Data(count: 27)) }
        let box = try AES.GCM.seal(message, using: key)
        #expect(throws: CryptoError.self) { try AES.GCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext, tag: box.tag.prefix(12)) }
    }

    @Test func emptyPlaintextStillAuthenticates() throws {
        let box = try AES.GCM.seal(Data(), using: key, authenticating: aad)
        #expect(box.ciphertext.isEmpty)
        #expect(try AES.GCM.open(box, using: key, authenticating: aad).isEmpty)
        #expect(throws: CryptoError.self) { try AES.GCM.open(box, using: key) }
    }
}

@Suite struct KeyWrapTests {
    @Test func wrongKEKIsAnAuthenticationFailure() throws {
        let kek = SymmetricKey(size: .bits256)
        let key = SymmetricKey(size: .bits256)
        let wrapped = try AES.KeyWrap.wrap(key, using: kek)
        #expect(wrapped.count == 40)
        #expect(try AES.KeyWrap.unwrap(wrapped, using: kek) == key)
        #expect { try AES.KeyWrap.unwrap(wrapped, using: SymmetricKey(size: .bits256)) } throws: {
            ($0 as? CryptoError)?.code == .authenticationFailure
        }
        let padded = try AES.KeyWrap.wrapWithPadding(SymmetricKey(data: Data("seven!!".utf8)), using: kek)
        #expect(padded.count == 16)
        #expect { try AES.KeyWrap.unwrapWithPadding(padded, using: SymmetricKey(size: .bits128)) } throws: {
            ($0 as? CryptoError)?.code == .authenticationFailure
        }
    }

    @Test func unwrapRejectsTheOtherVariant() throws {
        let kek = SymmetricKey(size: .bits128)
        let key = SymmetricKey(size: .bits128)
        #expect(throws: CryptoError.self) { try AES.KeyWrap.unwrapWithPadding(try AES.KeyWrap.wrap(key, using: kek), using: kek) }
        #expect(throws: CryptoError.self) { try AES.KeyWrap.unwrap(try AES.KeyWrap.wrapWithPadding(key, using: kek), using: kek) }
    }

    @Test func badSizesAreRefused() {
        let kek = SymmetricKey(size: .bits128)
        #expect(throws: CryptoError.self) { try AES.KeyWrap.wrap(SymmetricKey(data: Data(count: 8)), using: kek) }
        #expect(throws: CryptoError.self) { try AES.KeyWrap.wrap(SymmetricKey(data: Data(count: 20)), using: kek) }
        #expect(throws: CryptoError.self) { try AES.KeyWrap.wrapWithPadding(SymmetricKey(data: Data()), using: kek) }
        #expect { try AES.KeyWrap.wrap(SymmetricKey(size: .bits128), using: SymmetricKey(data: Data(count: 20))) } throws: {
            ($0 as? CryptoError)?.code == .invalidKeySize
        }
    }
}

@Suite struct HKDFTests {
    /// RFC 5869 Appendix A.1, through the public API.
    @Test func rfc5869CaseOne() throws {
        let okm = try HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(repeating: 0x0b, count: 22)),
            salt: Data(hex: "000102030405060708090a0b0c"), info: Data(hex: "f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42
        )
        #expect(
            okm.withUnsafeBytes { Data($0) }.hex
                == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func outputLengthBounds() {
        let ikm = SymmetricKey(size: .bits256)
        for count in [0, -1, 8161] {
            #expect(throws: CryptoError.self) {
                try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: Data(), info: Data(), outputByteCount: count)
            }
        }
    }
}

@Suite struct Argon2idTests {
    let salt = Data("0123456789abcdef".utf8)

    @Test(arguments: [1 << 10, 19 << 20, (64 << 20) + (3 << 10)])
    func memoryIsMappedOnHugePageBoundariesAndWholly(bytes: Int) throws {
        var memory: UnsafeMutablePointer<UInt8>?
        #expect(wv_argon2_allocate(&memory, bytes) == 0)
        let base = try #require(memory)
        defer { wv_argon2_free(base, bytes) }
        #expect(UInt(bitPattern: base) % (2 << 20) == 0)
        // Every byte is writable and reads back; a short mapping would fault here.
        let buffer = UnsafeMutableBufferPointer(start: base, count: bytes)
        for index in stride(from: 0, to: bytes, by: 4096) { buffer[index] = UInt8(truncatingIfNeeded: index >> 12) }
        buffer[bytes - 1] = 0xA5
        #expect(buffer[bytes - 1] == 0xA5 && buffer[bytes > 4096 ? 4096 : 0] == UInt8(bytes > 4096 ? 1 : 0))
    }

    @Test func deterministicAndSensitiveToEveryInput() throws {
        func derive(password: String = "correct horse", salt: Data? = nil, secret: Data? = nil) throws -> SymmetricKey {
            try Argon2id.deriveKey(
                password: Data(password.utf8), salt: salt ?? self.salt, iterations: 1, memoryKiB: 64, parallelism: 1,
                outputByteCount: 32, secret: secret
            )
        }
        let reference = try derive()
        #expect(reference.bitCount == 256)
        #expect(try derive() == reference)
        #expect(try derive(password: "correct horsf") != reference)
        #expect(try derive(salt: Data("0123456789abcdeg".utf8)) != reference)
        #expect(try derive(secret: Data("pepper".utf8)) != reference)
    }

    @Test func parametersLibargon2RefusesAreErrors() {
        let password = Data("pw".utf8)
        let cases: [(salt: Data, iterations: Int, memory: Int, lanes: Int, length: Int)] = [
            (Data(count: 7), 1, 64, 1, 32),  // salt under 8 bytes
            (salt, 0, 64, 1, 32),  // no passes
            (salt, 1, 4, 1, 32),  // under 8 KiB per lane
            (salt, 1, 64, 0, 32),  // no lanes
            (salt, 1, 64, 1, 3),  // tag under 4 bytes
            (salt, -1, 64, 1, 32),  // not a 32-bit value
        ]
        for item in cases {
            #expect {
                try Argon2id.deriveKey(
                    password: password, salt: item.salt, iterations: item.iterations, memoryKiB: item.memory, parallelism: item.lanes,
                    outputByteCount: item.length)
            } throws: {
                ($0 as? CryptoError)?.code == .invalidParameter
            }
        }
    }
}
