import Foundation
import Testing

@testable import VaultCrypto

/// Project Wycheproof vectors: every valid vector must give the expected output, every invalid one must be refused.
/// Each test counts the vectors it checked against `numberOfTests`, so a decoding slip cannot skip any.
/// The handling of "acceptable" vectors is recorded in Fixtures/ACCEPTABLE.md and at the point of use below.
@Suite struct WycheproofTests {
    /// OpenSSL 3.0's GCM provider holds at most 128-byte IVs (`GCM_IV_MAX_SIZE`); the three valid 2056-bit-IV
    /// vectors are therefore refused, which the public API (96-bit nonces only) never reaches.
    static let longestOpenSSLGCMIV = 128

    @Test func aesGCM() throws {
        let file: WycheproofFile<AeadTestGroup> = try Fixtures.load("wycheproof/aes_gcm_test.json")
        var checked = 0
        for group in file.testGroups {
            #expect(group.tagSize == 128, "only 128-bit tags are supported; the file has no others")
            for vector in group.tests {
                checked += 1
                if vector.iv.data.count > Self.longestOpenSSLGCMIV {
                    let nonce = try AES.GCM.Nonce(anyLengthData: vector.iv.data)
                    #expect("tcId \(vector.tcId)") {
                        try AES.GCM.seal(vector.msg.data, using: SymmetricKey(data: vector.key.data), nonce: nonce)
                    } throws: {
                        ($0 as? CryptoError)?.code == .invalidParameter
                    }
                    continue
                }
                let key = SymmetricKey(data: vector.key.data)
                let outcome = Result { () -> (AES.GCM.SealedBox, Data) in
                    let nonce = try AES.GCM.Nonce(anyLengthData: vector.iv.data)
                    let sealed = try AES.GCM.seal(vector.msg.data, using: key, nonce: nonce, authenticating: vector.aad.data)
                    let received = try AES.GCM.SealedBox(nonce: nonce, ciphertext: vector.ct.data, tag: vector.tag.data)
                    return (sealed, try AES.GCM.open(received, using: key, authenticating: vector.aad.data))
                }
                switch (vector.result, outcome) {
                case (.valid, .success(let (sealed, opened))):
                    #expect(sealed.ciphertext == vector.ct.data && sealed.tag == vector.tag.data, "tcId \(vector.tcId)")
                    #expect(opened == vector.msg.data, "tcId \(vector.tcId)")
                case (.valid, .failure(let error)):
                    Issue.record("tcId \(vector.tcId) valid but failed: \(error)")
                case (_, .success):
                    Issue.record("tcId \(vector.tcId) \(vector.flags) must be refused")
                case (_, .failure):
                    break
                }
            }
        }
        #expect(checked == file.numberOfTests)
    }

    @Test func aesKeyWrap() throws {
        try checkKeyWrap(file: "wycheproof/aes_wrap_test.json", wrap: AES.KeyWrap.wrap, unwrap: AES.KeyWrap.unwrap)
    }

    @Test func aesKeyWrapWithPadding() throws {
        try checkKeyWrap(
            file: "wycheproof/aes_kwp_test.json", wrap: AES.KeyWrap.wrapWithPadding, unwrap: AES.KeyWrap.unwrapWithPadding
        )
    }

    /// Valid: wrapping gives `ct` and unwrapping gives `msg`. Invalid and acceptable (ShortKey, 8-byte keys under
    /// RFC 3394, which SP 800-38F leaves undefined and we refuse): unwrapping `ct` fails and wrapping `msg` either
    /// fails or does not produce `ct`.
    private func checkKeyWrap(
        file path: String,
        wrap: (SymmetricKey, SymmetricKey) throws -> Data,
        unwrap: (Data, SymmetricKey) throws -> SymmetricKey
    ) throws {
        let file: WycheproofFile<KeywrapTestGroup> = try Fixtures.load(path)
        var checked = 0
        for group in file.testGroups {
            for vector in group.tests {
                checked += 1
                let kek = SymmetricKey(data: vector.key.data)
                let keyData = SymmetricKey(data: vector.msg.data)
                switch vector.result {
                case .valid:
                    #expect(try wrap(keyData, kek) == vector.ct.data, "tcId \(vector.tcId)")
                    #expect(try unwrap(vector.ct.data, kek) == keyData, "tcId \(vector.tcId)")
                case .invalid, .acceptable:
                    #expect(throws: CryptoError.self, "tcId \(vector.tcId) \(vector.flags)") { try unwrap(vector.ct.data, kek) }
                    #expect((try? wrap(keyData, kek)) != vector.ct.data, "tcId \(vector.tcId) \(vector.flags)")
                }
            }
        }
        #expect(checked == file.numberOfTests)
    }

    @Test func rsaOAEP2048SHA256MGF1SHA256() throws {
        let file: WycheproofFile<RsaesOaepDecryptTestGroup> = try Fixtures.load("wycheproof/rsa_oaep_2048_sha256_mgf1sha256_test.json")
        var checked = 0
        for group in file.testGroups {
            #expect(group.sha == "SHA-256" && group.mgf == "MGF1" && group.mgfSha == "SHA-256")
            let key = try RSA.Encryption.PrivateKey(pemRepresentation: group.privateKeyPem)
            #expect(key.publicKey.keySizeInBits == group.keySize)
            for vector in group.tests {
                checked += 1
                switch vector.result {
                case .valid:
                    #expect(try key.decrypt(vector.ct.data, label: vector.label.data) == vector.msg.data, "tcId \(vector.tcId)")
                    // OAEP is randomised, so encryption is checked by round trip.
                    let ciphertext = try key.publicKey.encrypt(vector.msg.data, label: vector.label.data)
                    #expect(try key.decrypt(ciphertext, label: vector.label.data) == vector.msg.data, "tcId \(vector.tcId)")
                case .invalid, .acceptable:
                    #expect("tcId \(vector.tcId) \(vector.flags)") { try key.decrypt(vector.ct.data, label: vector.label.data) } throws: {
                        ($0 as? CryptoError)?.code == .authenticationFailure
                    }
                }
            }
        }
        #expect(checked == file.numberOfTests)
    }

    @Test func ecdhP256ECPoint() throws {
        let file: WycheproofFile<EcdhEcpointTestGroup> = try Fixtures.load("wycheproof/ecdh_secp256r1_ecpoint_test.json")
        var checked = 0
        for group in file.testGroups {
            #expect(group.curve == "secp256r1" && group.encoding == "ecpoint")
            for vector in group.tests {
                checked += 1
                let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: scalar32(vector.private.data))
                let outcome = Result {
                    let peer = try P256.KeyAgreement.PublicKey(x963Representation: vector.public.data)
                    return try privateKey.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Data($0) }
                }
                switch (vector.result, outcome) {
                case (.valid, .success(let shared)):
                    #expect(shared == vector.shared.data, "tcId \(vector.tcId)")
                case (.valid, .failure(let error)):
                    Issue.record("tcId \(vector.tcId) valid but failed: \(error)")
                case (.acceptable, .success):
                    // CompressedPublic: x963Representation takes uncompressed points only (as CryptoKit does).
                    Issue.record("tcId \(vector.tcId) \(vector.flags): compressed points must be refused")
                case (.invalid, .success):
                    Issue.record("tcId \(vector.tcId) \(vector.flags) must be refused")
                case (_, .failure(let error)):
                    #expect((error as? CryptoError)?.code == .invalidPublicKey, "tcId \(vector.tcId)")
                }
            }
        }
        #expect(checked == file.numberOfTests)
    }

    /// Wycheproof writes scalars as ASN.1 integers: sometimes with a leading zero byte, sometimes shorter than 32 bytes.
    private func scalar32(_ bytes: Data) -> Data {
        let minimal = bytes.drop { $0 == 0 }
        return Data(count: 32 - minimal.count) + minimal
    }

    @Test func hkdfSHA256() throws {
        let file: WycheproofFile<HkdfTestGroup> = try Fixtures.load("wycheproof/hkdf_sha256_test.json")
        var checked = 0
        for group in file.testGroups {
            for vector in group.tests {
                checked += 1
                let derive = {
                    try HKDF<SHA256>.deriveKey(
                        inputKeyMaterial: SymmetricKey(data: vector.ikm.data), salt: vector.salt.data, info: vector.info.data,
                        outputByteCount: vector.size
                    )
                }
                switch vector.result {
                case .valid:
                    #expect(try derive() == SymmetricKey(data: vector.okm.data), "tcId \(vector.tcId)")
                case .invalid, .acceptable:
                    #expect(throws: CryptoError.self, "tcId \(vector.tcId) \(vector.flags)") { try derive() }
                }
            }
        }
        #expect(checked == file.numberOfTests)
    }

    /// Groups with 128-bit tags test truncated HMACs. The API only verifies full 32-byte codes, so for those groups
    /// the truncated tag must be refused by `isValidAuthenticationCode`, and the vector is checked against the
    /// prefix of the full code.
    @Test func hmacSHA256() throws {
        let file: WycheproofFile<MacTestGroup> = try Fixtures.load("wycheproof/hmac_sha256_test.json")
        var checked = 0
        for group in file.testGroups {
            let tagByteCount = group.tagSize / 8
            for vector in group.tests {
                checked += 1
                let key = SymmetricKey(data: vector.key.data)
                let code = HMAC<SHA256>.authenticationCode(for: vector.msg.data, using: key)
                let verifies = HMAC<SHA256>.isValidAuthenticationCode(vector.tag.data, authenticating: vector.msg.data, using: key)
                switch vector.result {
                case .valid:
                    #expect(code.prefix(tagByteCount) == vector.tag.data, "tcId \(vector.tcId)")
                    #expect(verifies == (tagByteCount == SHA256.byteCount), "tcId \(vector.tcId)")
                case .invalid, .acceptable:
                    #expect(code.prefix(tagByteCount) != vector.tag.data, "tcId \(vector.tcId)")
                    #expect(!verifies, "tcId \(vector.tcId)")
                }
            }
        }
        #expect(checked == file.numberOfTests)
    }
}
