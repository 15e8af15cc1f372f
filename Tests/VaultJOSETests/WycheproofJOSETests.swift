import Foundation
import Testing
import VaultCore
import VaultJOSE
import VaultJSON

/// Wycheproof's JWS and JWK suites, decoded into `Codable` groups.
struct WycheproofJOSEFile: Decodable {
    struct Group: Decodable {
        let comment: String?
        let tests: [Case]
        let `public`: JSONDocument?
        let `private`: JSONDocument?
    }

    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let jws: JSONDocument
        let result: String
    }

    let testGroups: [Group]
}

/// Raw JSON kept as bytes, so it can be handed to the project's own parser.
struct JSONDocument: Decodable {
    let data: Data
    var text: String? { (try? JSONParser().parse(data))?.stringValue }

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyJSON.self)
        data = try JSONSerialization.data(withJSONObject: value.object, options: [.fragmentsAllowed])
    }
}

/// Decodes any JSON value into Foundation objects.
struct AnyJSON: Decodable {
    let object: Any

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [Any] = []
            while !array.isAtEnd { items.append(try array.decode(AnyJSON.self).object) }
            object = items
        } else if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: Any] = [:]
            for key in keyed.allKeys { members[key.stringValue] = try keyed.decode(AnyJSON.self, forKey: key).object }
            object = members
        } else {
            let single = try decoder.singleValueContainer()
            if let text = try? single.decode(String.self) {
                object = text
            } else if let number = try? single.decode(Int64.self) {
                object = number
            } else if let number = try? single.decode(Double.self) {
                object = number
            } else if let flag = try? single.decode(Bool.self) {
                object = flag
            } else {
                object = NSNull()
            }
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

func fixture(_ name: String) throws -> Data {
    try Data(contentsOf: Bundle.module.resourceURL!.appendingPathComponent("Fixtures/\(name)"))
}

/// Verifies one vector: the compact JWS must verify with exactly the keys given.
func verdict(jws: String?, keys: () throws -> JSONWebKeySet) -> Result<Void, any Error> {
    Result {
        guard let jws else { throw JOSEError(.malformed, "not a compact string (JSON serialization)") }
        try CompactJWS(jws).verify(with: try keys(), allowed: Set(JWSAlgorithm.allCases))
    }
}

/// Valid vectors this project refuses on purpose: algorithms outside RS256, PS256, ES256 and HS256.
func usesUnsupportedAlgorithm(_ jws: String?) -> Bool {
    guard let headerPart = jws?.split(separator: ".").first, let header = Base64URL.decode(headerPart),
        let alg = (try? JSONParser().parse(header))?["alg"]?.stringValue
    else { return false }
    return JWSAlgorithm(rawValue: alg) == nil
}

/// Vectors of this snapshot whose expected result contradicts another vector or RFC 7515, and
/// what this project does instead.
let contradictoryJWSVectors: [Int: (expectAccepted: Bool, why: String)] = [
    367: (true, "byte-identical to tcId 357, which is marked valid; the padding it names is not in the file"),
    370: (true, "byte-identical to tcId 357, which is marked valid; the padding it names is not in the file"),
    372: (false, "a '?' inside the header part is not base64url (RFC 7515 §2); strict decoding refuses it"),
    373: (false, "a '?' inside the payload part is not base64url (RFC 7515 §2); strict decoding refuses it"),
]

@Suite struct WycheproofJOSETests {
    /// Runs every vector of a file with the keys `keys` builds from its group, and checks each verdict.
    func run(_ name: String, label: String, keys: @escaping (JSONDocument) throws -> JSONWebKeySet) throws {
        let file = try JSONDecoder().decode(WycheproofJOSEFile.self, from: try fixture(name))
        var counts = (accepted: 0, refused: 0, unsupported: 0)
        for group in file.testGroups {
            let keyDocument = try #require(group.public ?? group.private)
            for test in group.tests {
                let outcome = verdict(jws: test.jws.text) { try keys(keyDocument) }
                if let exception = contradictoryJWSVectors[test.tcId], name == "json_web_signature_test.json" {
                    let accepted = (try? outcome.get()) != nil
                    #expect(accepted == exception.expectAccepted, "tcId \(test.tcId): \(exception.why)")
                    continue
                }
                switch (test.result, outcome) {
                case ("valid", .success):
                    counts.accepted += 1
                case ("valid", .failure) where usesUnsupportedAlgorithm(test.jws.text):
                    counts.unsupported += 1
                case ("invalid", .failure):
                    counts.refused += 1
                default:
                    Issue.record("tcId \(test.tcId) \(test.comment) in \(group.comment ?? ""): expected \(test.result), got \(outcome)")
                }
            }
        }
        #expect(counts.accepted > 0 && counts.refused > 0)
        print(
            "Wycheproof \(label): \(counts.accepted) valid accepted, \(counts.refused) invalid refused, "
                + "\(counts.unsupported) valid but unsupported alg refused")
    }

    @Test func jsonWebSignatureSuite() throws {
        try run("json_web_signature_test.json", label: "JWS") { document in
            JSONWebKeySet(keys: [try JSONWebKey(jwk: try JSONParser().parse(document.data))])
        }
    }

    @Test func jsonWebKeySuite() throws {
        try run("json_web_key_test.json", label: "JWK") { document in
            try JSONWebKeySet(json: document.data, allowSymmetric: true)
        }
    }

    @Test func rfc7515AppendixA1VerifiesButIsExpired() throws {
        let vector = try JSONParser().parse(try fixture("rfc7515_a1_hs256.json"))
        let compact = try #require(vector["compact"]?.stringValue)
        let jwk = try #require(vector["jwk"])
        let key = try JSONWebKey(jwk: jwk)
        let jws = try CompactJWS(compact)
        try jws.verify(with: JSONWebKeySet(keys: [key]), allowed: [.hs256])
        let claims = try JSONParser().parse(jws.payload)
        let rules = JWTClaimsRules(issuer: "joe", audiences: ["any"])
        let error = #expect(throws: JWTClaimsError.self) { try rules.validate(claims, now: 1_800_000_000) }
        #expect(error?.code == .expired)
        // A flipped signature bit fails.
        var tampered = Array(compact)
        tampered[tampered.count - 2] = tampered[tampered.count - 2] == "A" ? "B" : "A"
        #expect(throws: JOSEError.self) { try CompactJWS(String(tampered)).verify(with: JSONWebKeySet(keys: [key]), allowed: [.hs256]) }
    }
}
