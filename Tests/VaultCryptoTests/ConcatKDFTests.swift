import Foundation
import Testing

@testable import VaultCrypto

/// The single-step Concat KDF against values computed by an independent implementation:
/// Python `cryptography` 48.0.0, `ConcatKDFHash(hashes.SHA256(), length, otherinfo).derive(z)`.
@Suite struct ConcatKDFTests {
    func secret(_ bytes: [UInt8]) -> SharedSecret {
        SharedSecret(storage: SecureBytes(count: bytes.count) { $0.copyBytes(from: bytes) })
    }

    func hex(_ key: SymmetricKey) -> String {
        key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }

    @Test func matchesAnIndependentImplementation() throws {
        let z = Array(UInt8(0)..<32)
        // JOSE-shaped OtherInfo: len‖"A128GCM" ‖ len‖"Alice" ‖ len‖"Bob" ‖ 128 bits.
        let otherInfo: [UInt8] =
            [0, 0, 0, 7] + Array("A128GCM".utf8) + [0, 0, 0, 5] + Array("Alice".utf8)
            + [0, 0, 0, 3] + Array("Bob".utf8) + [0, 0, 0, 0x80]
        #expect(
            hex(try secret(z).concatDerivedSymmetricKey(using: SHA256.self, otherInfo: otherInfo, outputByteCount: 16))
                == "780227d71f70693219c838c5c38d0366")
        // Longer than one hash: two counter rounds.
        #expect(
            hex(try secret(z).concatDerivedSymmetricKey(using: SHA256.self, otherInfo: Array("info".utf8), outputByteCount: 48))
                == "c3d6e2a35ac18f4771d72ff4a7e577ea7b98ae7fa6b6f165bbd17d7c1a24b91f4660044d61757df590f5fbb2b7094ed3")
    }
}
