import Foundation
import VaultCore
import VaultJSON

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded but not yet verified.
public struct CompactJWS: Sendable {
    /// The protected header.
    public let header: JSONValue
    /// The algorithm the header names; `none` and unknown names are refused on parsing.
    public let algorithm: JWSAlgorithm
    /// The payload bytes.
    public let payload: Data
    /// The signature bytes.
    public let signature: Data
    /// The ASCII bytes the signature covers: `BASE64URL(header) "." BASE64URL(payload)`.
    public let signingInput: Data

    /// The largest token accepted, long enough for any real access token.
    public static let maxLength = 16 * 1024

    /// Splits and decodes a compact JWS.
    ///
    /// - Throws: `JOSEError` when it is not three canonical base64url parts with a JSON object
    ///   header naming a supported `alg` and no `crit`.
    public init(_ text: String) throws(JOSEError) {
        guard text.utf8.count <= Self.maxLength else { throw JOSEError(.malformed, "token too long") }
        // Split on the UTF-8 bytes: `String.split` walks grapheme clusters, and on the D1 path that walk cost
        // more than the RSA verification (docs/PERFORMANCE.md).
        var text = text
        let split = text.withUTF8 { bytes -> Split in
            let raw = UnsafeRawBufferPointer(bytes)
            // memchr: the generic byte loops over the ~900-byte token showed in the D1 profile.
            func dot(after start: Int) -> Int? {
                guard start < raw.count, let base = raw.baseAddress,
                    let found = memchr(base + start, Int32(UInt8(ascii: ".")), raw.count - start)
                else { return nil }
                return UnsafeRawPointer(found) - base
            }
            guard let first = dot(after: 0), let second = dot(after: first + 1), dot(after: second + 1) == nil
            else { return .notThreeParts }
            guard let header = Base64URL.decode(UnsafeRawBufferPointer(rebasing: raw[..<first])),
                let payload = Base64URL.decode(UnsafeRawBufferPointer(rebasing: raw[(first + 1)..<second])),
                let signature = Base64URL.decode(UnsafeRawBufferPointer(rebasing: raw[(second + 1)...]))
            else { return .notBase64URL }
            return .parts(
                header: header, payload: payload, signature: signature,
                signingInput: Data(UnsafeRawBufferPointer(rebasing: raw[..<second])))
        }
        let headerBytes: Data
        let payload: Data
        let signature: Data
        let signingInput: Data
        switch split {
        case .notThreeParts: throw JOSEError(.malformed, "a compact JWS has three parts")
        case .notBase64URL: throw JOSEError(.malformed, "a part is not canonical base64url")
        case .parts(let h, let p, let s, let i): (headerBytes, payload, signature, signingInput) = (h, p, s, i)
        }
        let header: JSONValue
        do { header = try JSONParser(maxDepth: 8).parse(headerBytes) } catch {
            throw JOSEError(.malformed, "header is not JSON: \(error.code.rawValue)")
        }
        guard case .object = header else { throw JOSEError(.malformed, "header is not an object") }
        guard let name = header["alg"]?.stringValue else { throw JOSEError(.malformed, "alg is missing") }
        guard let algorithm = JWSAlgorithm(rawValue: name) else {
            throw JOSEError(.algorithmNotAllowed, "alg \(name == "none" ? "none" : "unsupported") refused")
        }
        // No extension is understood, so any critical one must fail (RFC 7515 §4.1.11), b64=false included.
        guard header["crit"] == nil else { throw JOSEError(.unsupportedHeader, "crit is not supported") }
        self.header = header
        self.algorithm = algorithm
        self.payload = payload
        self.signature = signature
        self.signingInput = signingInput
    }

    /// How a compact serialization splits.
    private enum Split {
        case notThreeParts
        case notBase64URL
        case parts(header: Data, payload: Data, signature: Data, signingInput: Data)
    }

    /// The header's `kid`, if it is a string.
    public var keyID: String? { header["kid"]?.stringValue }

    /// The header's `typ`, if it is a string.
    public var type: String? { header["typ"]?.stringValue }

    /// Verifies the signature with the one key of `keys` that fits the header.
    ///
    /// - Parameter allowed: the algorithms acceptable in this context.
    /// - Throws: `JOSEError` when the algorithm is not allowed, no key fits, or the signature is wrong.
    public func verify(with keys: JSONWebKeySet, allowed: Set<JWSAlgorithm>) throws(JOSEError) {
        guard allowed.contains(algorithm) else { throw JOSEError(.algorithmNotAllowed, "alg \(algorithm.rawValue) not allowed here") }
        let key = try keys.key(keyID: keyID, algorithm: algorithm)
        guard key.isValidSignature(signature, for: signingInput, algorithm: algorithm) else {
            throw JOSEError(.badSignature, "signature does not verify")
        }
    }
}
