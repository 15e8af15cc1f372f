import Testing
import VaultCore
import VaultJOSE

@Suite struct JWTClaimsRulesTests {
    let rules = JWTClaimsRules(issuer: "https://idp.example", audiences: ["wallet"], allowedAuthorizedParties: ["oem-a"])
    let now: Int64 = 1_800_000_000

    func claims(_ edit: (inout [(key: String, value: JSONValue)]) -> Void = { _ in }) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("iss", .string("https://idp.example")), ("aud", .array([.string("other"), .string("wallet")])),
            ("sub", .string("alice")), ("azp", .string("oem-a")), ("exp", .integer(now + 300)), ("nbf", .integer(now - 5)),
        ]
        edit(&members)
        return .object(members)
    }

    func code(_ value: JSONValue) -> JWTClaimsError.Code? {
        do {
            _ = try rules.validate(value, now: now)
            return nil
        } catch { return error.code }
    }

    func replacing(_ name: String, with value: JSONValue?) -> JSONValue {
        claims { members in
            members.removeAll { $0.key == name }
            if let value { members.append((name, value)) }
        }
    }

    @Test func acceptsGoodClaims() throws {
        let identity = try rules.validate(claims(), now: now)
        #expect(identity == .init(issuer: "https://idp.example", subject: "alice", authorizedParty: "oem-a"))
    }

    @Test func enforcesEachRule() {
        #expect(code(replacing("exp", with: .integer(now - 61))) == .expired)
        #expect(code(replacing("exp", with: .integer(now - 59))) == nil)
        #expect(code(replacing("exp", with: nil)) == .malformed)
        #expect(code(replacing("exp", with: .integer(.max))) == nil)
        #expect(code(replacing("exp", with: .string("soon"))) == .malformed)
        #expect(code(replacing("nbf", with: .integer(now + 61))) == .notYetValid)
        #expect(code(replacing("nbf", with: .integer(now + 59))) == nil)
        #expect(code(replacing("iss", with: .string("https://idp.example/"))) == .wrongIssuer)
        #expect(code(replacing("aud", with: .string("other"))) == .wrongAudience)
        #expect(code(replacing("aud", with: nil)) == .wrongAudience)
        #expect(code(replacing("sub", with: .string(""))) == .missingSubject)
        #expect(code(replacing("azp", with: .string("oem-b"))) == .azpNotAllowed)
        #expect(code(replacing("azp", with: nil)) == .azpNotAllowed)
        #expect(code(.array([])) == .malformed)
    }

    @Test func clientIDStandsInForAbsentAzp() throws {
        var value = replacing("azp", with: nil)
        if case .object(var members) = value {
            members.append(("client_id", .string("oem-a")))
            value = .object(members)
        }
        #expect(try rules.validate(value, now: now).authorizedParty == "oem-a")
    }

    @Test func requiredScope() {
        var scoped = rules
        scoped.requiredScope = "wallet-backup.ashx"
        #expect(throws: JWTClaimsError.self) { try scoped.validate(claims(), now: now) }
        let withScope = replacing("scope", with: .string("openid wallet-backup.ashx"))
        #expect(throws: Never.self) { try scoped.validate(withScope, now: now) }
    }
}
