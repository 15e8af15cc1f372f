import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// `Vectors/rsa/rsa-recipients.json`: RSA public keys a writer may or may not wrap to (FORMAT.md §4.1), the same
/// cases the Kotlin library's `RsaRecipientVectorTest` reads, so both SDKs refuse the same keys.
struct RSARecipientVectorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let n: Data
        let e: Data
        let usable: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        let url = Bundle.module.resourceURL!.appendingPathComponent("Vectors/rsa/rsa-recipients.json")
        guard let data = try? Data(contentsOf: url),
            let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let cases = top["cases"] as? [[String: String]]
        else { return [] }
        return cases.compactMap { item in
            guard let name = item["name"], let n = item["n"].flatMap(Base64URL.decode), let e = item["e"].flatMap(Base64URL.decode)
            else { return nil }
            return Case(name: name, n: n, e: e, usable: item["expect"] == "usable")
        }
    }()

    @Test func theVectorFileReads() {
        #expect(Self.cases.count == 13)
    }

    @Test(arguments: cases)
    func aWriterWrapsOnlyToUsableKeys(_ vector: Case) async throws {
        let jwk = PublicJWK.rsa(n: vector.n, e: vector.e)
        #expect(jwk.isAcceptable)
        if vector.usable {
            let recipient = PublicKeyRecipient(try jwk.rsaKey(path: "jwk"))
            let wrapped = try await recipient.wrap(SymmetricKey(size: .bits256))
            #expect(wrapped.encryptedKey.count == vector.n.count)
        } else {
            #expect { try jwk.rsaKey(path: "jwk") } throws: { VaultEnvelopeError.Code.malformed.matches($0) }
        }
    }
}
