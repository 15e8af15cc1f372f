import Foundation
import Testing

@testable import VaultCrypto

/// Keys are generated once: RSA key generation dominates the suite's run time otherwise.
enum SharedKeys {
    static let rsa: RSA.Signing.PrivateKey = {
        do { return try RSA.Signing.PrivateKey(keySize: 2048) } catch { fatalError("RSA key generation failed: \(error)") }
    }()
}

@Suite struct P256SigningTests {
    let message = Data("{\"sub\":\"wallet\"}".utf8)

    @Test func es256RoundTripWithRawSignature() throws {
        let key = try P256.Signing.PrivateKey()
        let signature = try key.signature(for: message)
        #expect(signature.rawRepresentation.count == 64)
        let decoded = try P256.Signing.ECDSASignature(rawRepresentation: signature.rawRepresentation)
        #expect(key.publicKey.isValidSignature(decoded, for: message))
        #expect(!key.publicKey.isValidSignature(decoded, for: Data("{\"sub\":\"wallet2\"}".utf8)))
        #expect(!(try P256.Signing.PrivateKey()).publicKey.isValidSignature(decoded, for: message))
    }

    @Test func tamperedSignatureIsRejected() throws {
        let key = try P256.Signing.PrivateKey()
        var raw = try key.signature(for: message).rawRepresentation
        raw[10] ^= 0x40
        #expect(!key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: message))
        // r = 0 and s = 0 must not verify (the classic "psychic signature" bug).
        let zero = try P256.Signing.ECDSASignature(rawRepresentation: Data(count: 64))
        #expect(!key.publicKey.isValidSignature(zero, for: message))
    }

    @Test func derAndRawSignatureConversions() throws {
        let key = try P256.Signing.PrivateKey()
        let signature = try key.signature(for: message)
        let der = signature.derRepresentation
        #expect(der.first == 0x30)
        #expect(try P256.Signing.ECDSASignature(derRepresentation: der) == signature)
        #expect(throws: CryptoError.self) { try P256.Signing.ECDSASignature(derRepresentation: der + [0]) }
        #expect(throws: CryptoError.self) { try P256.Signing.ECDSASignature(rawRepresentation: Data(count: 63)) }
    }

    @Test func pemDerAndRawRoundTrips() throws {
        let key = try P256.Signing.PrivateKey()
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let fromPEM = try P256.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
        let fromDER = try P256.Signing.PrivateKey(derRepresentation: key.derRepresentation)
        let fromRaw = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        for copy in [fromPEM, fromDER, fromRaw] {
            #expect(copy.publicKey.x963Representation == key.publicKey.x963Representation)
            #expect(key.publicKey.isValidSignature(try copy.signature(for: message), for: message))
        }
        let publicKey = key.publicKey
        #expect(publicKey.pemRepresentation.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        #expect(try P256.Signing.PublicKey(pemRepresentation: publicKey.pemRepresentation).rawRepresentation == publicKey.rawRepresentation)
        #expect(
            try P256.Signing.PublicKey(derRepresentation: publicKey.derRepresentation).x963Representation == publicKey.x963Representation)
        #expect(
            try P256.Signing.PublicKey(rawRepresentation: publicKey.rawRepresentation).x963Representation == publicKey.x963Representation)
        #expect(publicKey.x963Representation.count == 65 && publicKey.rawRepresentation.count == 64)
    }

    @Test func offCurvePointIsRefused() throws {
        var point = try P256.Signing.PrivateKey().publicKey.x963Representation
        point[64] ^= 1
        #expect { try P256.Signing.PublicKey(x963Representation: point) } throws: { error in
            (error as? CryptoError)?.code == .invalidPublicKey
        }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(x963Representation: Data([0x04]) + Data(count: 64)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(x963Representation: point.prefix(33)) }
    }

    @Test func outOfRangeScalarsAreRefused() {
        let order = Data(hex: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: Data(count: 32)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: order) }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: Data(count: 31)) }
    }

    @Test func scalarOneGivesTheGenerator() throws {
        let generator =
            "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
            + "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"
        let key = try P256.Signing.PrivateKey(rawRepresentation: Data(count: 31) + [1])
        #expect(key.publicKey.x963Representation.hex == generator)
    }

    @Test func rsaPEMIsNotAP256Key() {
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(pemRepresentation: SharedKeys.rsa.pemRepresentation) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(pemRepresentation: SharedKeys.rsa.publicKey.pemRepresentation) }
    }
}

@Suite struct RSASigningTests {
    let message = Data("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ3YWxsZXQifQ".utf8)

    @Test(arguments: [RSA.Signing.Padding.pkcs1v1_5, .pss])
    func roundTrip(padding: RSA.Signing.Padding) throws {
        let key = SharedKeys.rsa
        let signature = try key.signature(for: message, padding: padding)
        #expect(signature.count == 256)
        #expect(key.publicKey.isValidSignature(signature, for: message, padding: padding))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0], padding: padding))
        let other: RSA.Signing.Padding = padding == .pss ? .pkcs1v1_5 : .pss
        #expect(!key.publicKey.isValidSignature(signature, for: message, padding: other))
        var tampered = signature
        tampered[100] ^= 1
        #expect(!key.publicKey.isValidSignature(tampered, for: message, padding: padding))
        #expect(!key.publicKey.isValidSignature(signature.dropLast(), for: message, padding: padding))
    }

    @Test func pkcs1SignatureIsDeterministicAndPSSIsNot() throws {
        let key = SharedKeys.rsa
        #expect(try key.signature(for: message, padding: .pkcs1v1_5) == (try key.signature(for: message, padding: .pkcs1v1_5)))
        #expect(try key.signature(for: message, padding: .pss) != (try key.signature(for: message, padding: .pss)))
    }

    @Test func publicKeyFromModulusAndExponent() throws {
        let publicKey = SharedKeys.rsa.publicKey
        #expect(publicKey.keySizeInBits == 2048)
        #expect(publicKey.exponent == Data([0x01, 0x00, 0x01]))
        let rebuilt = try RSA.Signing.PublicKey(modulus: publicKey.modulus, exponent: publicKey.exponent)
        let signature = try SharedKeys.rsa.signature(for: message, padding: .pss)
        #expect(rebuilt.isValidSignature(signature, for: message, padding: .pss))
        // Leading zero bytes (as some JWK encoders emit) do not change the key.
        #expect(try RSA.Signing.PublicKey(modulus: [0] + publicKey.modulus, exponent: publicKey.exponent).modulus == publicKey.modulus)
    }

    @Test func keysBelow2048BitsAreRefused() throws {
        #expect { try RSA.Signing.PrivateKey(keySize: 1024) } throws: { ($0 as? CryptoError)?.code == .weakParameters }
        let modulus = SharedKeys.rsa.publicKey.modulus
        #expect { try RSA.Signing.PublicKey(modulus: modulus.prefix(128), exponent: [1, 0, 1]) } throws: {
            ($0 as? CryptoError)?.code == .weakParameters
        }
        // An even modulus or exponent is not an RSA key.
        var even = modulus
        even[even.count - 1] &= 0xFE
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: even, exponent: [1, 0, 1]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: modulus, exponent: [1, 0, 0]) }
    }

    @Test func pemAndDERRoundTrips() throws {
        let key = SharedKeys.rsa
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let fromPEM = try RSA.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
        let fromDER = try RSA.Signing.PrivateKey(derRepresentation: key.derRepresentation)
        for copy in [fromPEM, fromDER] {
            #expect(copy.publicKey.modulus == key.publicKey.modulus)
            let signature = try copy.signature(for: message, padding: .pkcs1v1_5)
            #expect(key.publicKey.isValidSignature(signature, for: message, padding: .pkcs1v1_5))
        }
        let publicPEM = key.publicKey.pemRepresentation
        #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        #expect(try RSA.Signing.PublicKey(pemRepresentation: publicPEM).modulus == key.publicKey.modulus)
        #expect(try RSA.Signing.PublicKey(derRepresentation: key.publicKey.derRepresentation).modulus == key.publicKey.modulus)
        #expect(throws: CryptoError.self) { try RSA.Signing.PrivateKey(pemRepresentation: publicPEM) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PrivateKey(pemRepresentation: "not a key") }
    }
}

@Suite struct KeyImportEdgeCases {
    @Test func privatePEMIsNotAcceptedAsAPublicKey() throws {
        let p256PEM = try P256.Signing.PrivateKey().pemRepresentation
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(pemRepresentation: SharedKeys.rsa.pemRepresentation) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(pemRepresentation: p256PEM) }
    }

    @Test func descriptionsCarryNoKeyMaterial() throws {
        let key = SymmetricKey(data: Data(repeating: 0xAB, count: 32))
        for text in [String(describing: key), String(reflecting: key), "\(key)"] {
            #expect(!text.lowercased().contains("abab"))
            #expect(!text.contains("171"))
        }
        let error = CryptoError(.authenticationFailure, "authentication failed")
        #expect(error.description == "authenticationFailure: authentication failed")
    }
}

/// Keys are shared across tasks in the server; each operation must use its own libcrypto context.
@Suite struct ConcurrentUseTests {
    @Test func oneKeySignsAndVerifiesFromManyTasks() async throws {
        let ecKey = try P256.Signing.PrivateKey()
        let rsaKey = SharedKeys.rsa
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let message = Data("message \(index)".utf8)
                    guard let es256 = try? ecKey.signature(for: message),
                        let ps256 = try? rsaKey.signature(for: message, padding: .pss)
                    else { return false }
                    return ecKey.publicKey.isValidSignature(es256, for: message)
                        && rsaKey.publicKey.isValidSignature(ps256, for: message, padding: .pss)
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 16 && results.allSatisfy { $0 })
    }

    /// One public key verifies on prepared contexts it keeps and reuses (PreparedVerifierPool): good and bad
    /// signatures of both paddings, interleaved on many tasks, must each get the answer a fresh context gives, and a
    /// failed verification must leave nothing behind that changes the next one.
    @Test func oneRSAPublicKeyReusesItsContextsAcrossGoodAndBadSignatures() async throws {
        let privateKey = SharedKeys.rsa
        let publicKey = try RSA.Signing.PublicKey(derRepresentation: privateKey.publicKey.derRepresentation)
        let messages = (0..<4).map { Data("eyJhbGciOiJSUzI1NiJ9.message-\($0)".utf8) }
        let pkcs1 = try messages.map { try privateKey.signature(for: $0, padding: .pkcs1v1_5) }
        let pss = try messages.map { try privateKey.signature(for: $0, padding: .pss) }
        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mistakes = 0
                    for round in 0..<24 {
                        let index = (task + round) % messages.count
                        let message = messages[index]
                        var tampered = pkcs1[index]
                        tampered[(round * 7) % tampered.count] ^= 0x10
                        let checks: [(Bool, Bool)] = [
                            (publicKey.isValidSignature(pkcs1[index], for: message, padding: .pkcs1v1_5), true),
                            (publicKey.isValidSignature(tampered, for: message, padding: .pkcs1v1_5), false),
                            (publicKey.isValidSignature(pss[index], for: message, padding: .pss), true),
                            (publicKey.isValidSignature(pkcs1[index], for: message, padding: .pss), false),
                            (publicKey.isValidSignature(pss[index], for: message + [0], padding: .pss), false),
                            (publicKey.isValidSignature(Data(), for: message, padding: .pkcs1v1_5), false),
                            (
                                publicKey.isValidSignature(pkcs1[index], for: messages[(index + 1) % messages.count], padding: .pkcs1v1_5),
                                false
                            ),
                            (publicKey.isValidSignature(pkcs1[index], for: message, padding: .pkcs1v1_5), true),
                        ]
                        mistakes += checks.filter { $0.0 != $0.1 }.count
                    }
                    return mistakes
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }
}
