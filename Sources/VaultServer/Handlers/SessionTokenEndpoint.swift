import Foundation
import VaultCore
import VaultHTTP
import VaultJSON
import VaultWire

/// D1 `POST /wallet-session-token.ashx`: trades an OIDC access token for a session token.
///
/// Accepts the seed's form (`Authorization: Bearer`) and RFC 8693 token exchange
/// (`application/x-www-form-urlencoded` with `grant_type`, `subject_token`, `subject_token_type`).
struct SessionTokenEndpoint: Sendable {
    static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"

    let oidc: OIDCTokenVerifier
    let sessions: SessionTokenService
    let clock: any ServerClock

    /// The token response (RFC 8693 §2.2.1): members sorted by name, as `HTTPResponse.json` wrote them, and byte for
    /// byte what jansson writes for them.
    enum TokenResponse {
        /// Every member after `access_token`, with the quote that ends the token and the brace that ends the object.
        private static let afterToken: Data = {
            let rest = PortableJSONSerializer.data(
                of: .object([
                    ("aud", .string(SessionTokenService.audience)), ("expires_in", .integer(SessionTokenService.lifetime)),
                    ("issued_token_type", .string(SessionTokenEndpoint.jwtTokenType)), ("token_type", .string("Bearer")),
                ]))
            return Data("\",".utf8) + rest.dropFirst()
        }()
        private static let beforeToken = Data("{\"access_token\":\"".utf8)

        /// The body for a minted token. Only the token varies, and a compact JWS is base64url letters and dots, which
        /// JSON never escapes, so the text is the token's bytes between fixed parts: writing the five members anew
        /// each time cost 1.5% of a mint.
        static func json(accessToken: String) -> Data {
            assert(
                accessToken.utf8.allSatisfy { byte in
                    let letter = Character(Unicode.Scalar(byte))
                    return letter.isASCII && (letter.isLetter || letter.isNumber || "-_.".contains(letter))
                }, "not a compact JWS")
            var body = Data(capacity: beforeToken.count + accessToken.utf8.count + afterToken.count)
            body.append(beforeToken)
            body.append(contentsOf: accessToken.utf8)
            body.append(afterToken)
            return body
        }
    }

    func handle(_ request: HTTPRequest, notes: RequestNotes) throws(APIError) -> HTTPResponse {
        let token = try subjectToken(request)
        let now = clock.now()
        let identity: SessionIdentity
        do {
            identity = try oidc.verify(token, now: now)
        } catch {
            notes.reason = error.reason
            throw APIError.invalidToken
        }
        let minted: String
        do { minted = try sessions.mint(for: identity, now: now) } catch { throw APIError.internalError }
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: TokenResponse.json(accessToken: minted))
    }

    private func subjectToken(_ request: HTTPRequest) throws(APIError) -> String {
        let contentType = request.header("content-type")?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard contentType == "application/x-www-form-urlencoded", !request.body.isEmpty else {
            guard let bearer = request.bearerToken else { throw APIError.invalidToken }
            return bearer
        }
        let form = FormBody(request.body)
        guard form["grant_type"] == Self.tokenExchangeGrant else {
            throw APIError(.unsupportedGrantType, "grant_type must be \(Self.tokenExchangeGrant)")
        }
        guard form["subject_token_type"] == Self.accessTokenType else {
            throw APIError(.invalidRequest, "subject_token_type must be \(Self.accessTokenType)")
        }
        guard let token = form["subject_token"], !token.isEmpty else {
            throw APIError(.invalidRequest, "subject_token is missing")
        }
        return token
    }
}
