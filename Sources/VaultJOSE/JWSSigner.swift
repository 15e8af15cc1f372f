import Foundation
import VaultCore
import VaultCrypto
import VaultJSON

/// A private or shared key that produces compact JWS tokens.
public struct JWSSigner: Sendable {
    /// The key material and the algorithm it signs with.
    public enum Key: Sendable {
        case hmac(SymmetricKey)
        case rsa(RSA.Signing.PrivateKey, JWSAlgorithm)
        case p256(P256.Signing.PrivateKey)
    }

    /// The `kid` written into every header.
    public let keyID: String
    /// The key.
    public let key: Key
    /// An HMAC key, keyed once for every token this signer signs.
    private let keyedMAC: KeyedHMAC?

    /// Creates a signer.
    public init(keyID: String, key: Key) {
        self.keyID = keyID
        self.key = key
        if case .hmac(let secret) = key { keyedMAC = KeyedHMAC(key: secret) } else { keyedMAC = nil }
    }

    /// The algorithm this signer writes.
    public var algorithm: JWSAlgorithm {
        switch key {
        case .hmac: .hs256
        case .rsa(_, let algorithm): algorithm
        case .p256: .es256
        }
    }

    /// The protected header of the tokens one signer signs with one `typ` and set of extra members, encoded once.
    ///
    /// A signer that signs many tokens under the same header (the server's session tokens) makes it once:
    /// writing and encoding the header anew was a tenth of what signing a session token cost besides the HMAC.
    public struct EncodedHeader: Sendable {
        /// The `kid` of the signer that made it, which alone may sign under it.
        fileprivate let keyID: String
        /// The header's base64url text.
        fileprivate let text: String
    }

    /// The header of `alg`, `kid`, `typ` and any extra members, encoded for `sign(payload:header:)`.
    public func header(type: String?, extraHeader: [String: String] = [:]) -> EncodedHeader {
        let members: [(String, JSONValue)]
        if extraHeader.isEmpty {
            // Already in sorted order: alg, kid, typ.
            members = [("alg", .string(algorithm.rawValue)), ("kid", .string(keyID))] + (type.map { [("typ", .string($0))] } ?? [])
        } else {
            var header = extraHeader
            header["alg"] = algorithm.rawValue
            header["kid"] = keyID
            header["typ"] = type
            members = header.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }
        }
        // Sorted as JSONEncoder's .sortedKeys wrote them. PortableJSONSerializer writes what jansson writes, byte for
        // byte, at a fraction of its cost for a few short members (no node per value, no second dump to size the text).
        return EncodedHeader(keyID: keyID, text: Base64URL.encode(PortableJSONSerializer.data(of: .object(members))))
    }

    /// Signs a payload under a header of `alg`, `kid`, `typ` and any extra members.
    ///
    /// - Throws: `CryptoError` when the key cannot sign.
    public func sign(payload: Data, type: String?, extraHeader: [String: String] = [:]) throws -> String {
        try sign(payload: payload, header: header(type: type, extraHeader: extraHeader))
    }

    /// Signs a payload under a header this signer encoded (`header(type:extraHeader:)`).
    ///
    /// The signing input is written once into one buffer and signed there, and the token is that buffer, a dot and
    /// the signature's letters: one copy of the text instead of the six strings and copies that concatenating made.
    /// - Throws: `CryptoError` when the key cannot sign.
    public func sign(payload: Data, header: EncodedHeader) throws -> String {
        precondition(header.keyID == keyID, "JWSSigner.sign: the header was encoded by another signer")
        var headerText = header.text
        let inputCount = headerText.utf8.count + 1 + Base64URL.encodedCount(ofByteCount: payload.count)
        let input = [UInt8](unsafeUninitializedCapacity: inputCount) { buffer, initialized in
            let output = UnsafeMutableRawBufferPointer(buffer)
            let headerCount = headerText.withUTF8 { text in
                output.copyMemory(from: UnsafeRawBufferPointer(text))
                return text.count
            }
            output[headerCount] = UInt8(ascii: ".")
            payload.withUnsafeBytes { Base64URL.encode($0, into: UnsafeMutableRawBufferPointer(rebasing: output[(headerCount + 1)...])) }
            initialized = inputCount
        }
        let signature = try input.withUnsafeBytes { bytes throws -> Data in
            // Borrowed for the call only: the bytes are not copied into a `Data` of their own.
            try self.signature(
                for: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none))
        }
        let tokenCount = inputCount + 1 + Base64URL.encodedCount(ofByteCount: signature.count)
        return String(unsafeUninitializedCapacity: tokenCount) { buffer in
            let output = UnsafeMutableRawBufferPointer(buffer)
            input.withUnsafeBytes { output.copyMemory(from: $0) }
            output[inputCount] = UInt8(ascii: ".")
            signature.withUnsafeBytes { Base64URL.encode($0, into: UnsafeMutableRawBufferPointer(rebasing: output[(inputCount + 1)...])) }
            return tokenCount
        }
    }

    private func signature(for input: Data) throws -> Data {
        switch key {
        case .hmac(let secret): keyedMAC?.code(for: input) ?? HMAC<SHA256>.authenticationCode(for: input, using: secret)
        case .rsa(let privateKey, .ps256): try privateKey.signature(for: input, padding: .pss)
        case .rsa(let privateKey, _): try privateKey.signature(for: input, padding: .pkcs1v1_5)
        case .p256(let privateKey): try privateKey.signature(for: input).rawRepresentation
        }
    }

    /// The public JWK of an asymmetric signer, for publishing in a JWKS; nil for HMAC.
    public var publicJWK: [String: String]? {
        switch key {
        case .hmac: return nil
        case .rsa(let privateKey, let algorithm):
            return [
                "kty": "RSA", "kid": keyID, "use": "sig", "alg": algorithm.rawValue,
                "n": Base64URL.encode(privateKey.publicKey.modulus), "e": Base64URL.encode(privateKey.publicKey.exponent),
            ]
        case .p256(let privateKey):
            let raw = privateKey.publicKey.rawRepresentation
            return [
                "kty": "EC", "kid": keyID, "use": "sig", "alg": "ES256", "crv": "P-256",
                "x": Base64URL.encode(raw.prefix(32)), "y": Base64URL.encode(raw.suffix(32)),
            ]
        }
    }
}
