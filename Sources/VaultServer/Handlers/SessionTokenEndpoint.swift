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

    struct TokenResponse: Encodable {
        let accessToken: String
        let tokenType = "Bearer"
        let expiresIn = SessionTokenService.lifetime
        let aud = SessionTokenService.audience
        let issuedTokenType = SessionTokenEndpoint.jwtTokenType

        /// The body, members sorted by name as `HTTPResponse.json` wrote them, by the Swift writer that writes what
        /// jansson writes (JSONEncoder was a tenth of a mint's CPU, jansson then a tenth of what was left).
        var json: Data {
            PortableJSONSerializer.data(
                of: .object([
                    ("access_token", .string(accessToken)), ("aud", .string(aud)), ("expires_in", .integer(Int64(expiresIn))),
                    ("issued_token_type", .string(issuedTokenType)), ("token_type", .string(tokenType)),
                ]))
        }

        enum CodingKeys: String, CodingKey {
            case aud
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case issuedTokenType = "issued_token_type"
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
            body: TokenResponse(accessToken: minted).json)
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
