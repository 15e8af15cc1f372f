import Foundation
import Testing

@testable import VaultCrypto

@Suite struct HashAndMACTests {
    @Test func sha256KnownAnswers() {
        // FIPS 180-2 Appendix B.1 and the empty string.
        #expect(SHA256.hash(data: Data("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(data: Data()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func sha256OnTheStackMatchesKnownAnswersAndHash() {
        func stacked(_ bytes: [UInt8]) -> Data { bytes.withUnsafeBytes { SHA256.withDigest(of: $0) { Data($0) } } }
        #expect(stacked(Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(stacked([]).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        for length in [1, 55, 56, 64, 65, 400, 4096] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(stacked(bytes) == SHA256.hash(data: Data(bytes)), "\(length) bytes")
        }
    }

    @Test func sha256OfNonContiguousDataMatchesContiguous() {
        var chunked = DispatchData.empty
        for part in ["hello, ", "world"] {
            Array(part.utf8).withUnsafeBytes { chunked.append($0) }
        }
        #expect(chunked.regions.count == 2)
        #expect(SHA256.hash(data: chunked) == SHA256.hash(data: Data("hello, world".utf8)))
    }

    @Test func hmacWithEmptyKeyAndMessage() {
        let key = SymmetricKey(data: Data())
        let code = HMAC<SHA256>.authenticationCode(for: Data(), using: key)
        #expect(code.hex == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        #expect(HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Data(), using: key))
    }

    @Test func hmacCopiesOfOneKeyedCodeGoOnIndependently() {
        let key = SymmetricKey(size: .bits256)
        let keyed = HMAC<SHA256>(key: key)
        var first = keyed
        first.update(data: Data("pay 10 ".utf8))
        var second = first
        first.update(data: Data("to alice".utf8))
        second.update(data: Data("to bob".utf8))
        #expect(first.finalize() == HMAC<SHA256>.authenticationCode(for: Data("pay 10 to alice".utf8), using: key))
        #expect(second.finalize() == HMAC<SHA256>.authenticationCode(for: Data("pay 10 to bob".utf8), using: key))
        // The keyed original was never given a message, however its copies were used.
        #expect(keyed.finalize() == HMAC<SHA256>.authenticationCode(for: Data(), using: key))
        #expect(keyed.finalize() == HMAC<SHA256>.authenticationCode(for: Data(), using: key))
    }

    @Test func hmacRejectsTamperedAndTruncatedCodes() {
        let key = SymmetricKey(size: .bits256)
        let message = Data("pay 10 to alice".utf8)
        var code = HMAC<SHA256>.authenticationCode(for: message, using: key)
        #expect(HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: message, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(code.prefix(16), authenticating: message, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Data("pay 11 to alice".utf8), using: key))
        code[31] ^= 1
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: message, using: key))
    }

    @Test func symmetricKeyBasics() {
        let key = SymmetricKey(size: .bits192)
        #expect(key.bitCount == 192)
        #expect(key == SymmetricKey(data: key.withUnsafeBytes { Data($0) }))
        #expect(key != SymmetricKey(size: .bits192))
        #expect(key.description == "SymmetricKey(192 bits)")
        #expect(SymmetricKeySize(bitCount: 512).bitCount == 512)
    }

    @Test func secureRandomProducesDistinctBytes() {
        #expect(SecureRandom.bytes(count: 0).isEmpty)
        let first = SecureRandom.bytes(count: 32)
        #expect(first.count == 32)
        #expect(first != SecureRandom.bytes(count: 32))
    }
}
