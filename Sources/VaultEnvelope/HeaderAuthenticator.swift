import Foundation
import VaultCore
import VaultCrypto

/// Computes what binds an extended-form blob's header to its DEK: the AES-GCM additional data and the
/// per-member MACs that let a reader say which member was altered (FORMAT.md §5).
///
/// GCM alone answers only "something changed"; the MACs, keyed from the DEK so the server cannot recompute
/// them, name the member. A blob is accepted only when both the MACs and the GCM tag verify.
struct HeaderAuthenticator {
    /// The members with their own MAC, in `macs` order, and the error a mismatch reports.
    static let macedMembers: [(name: String, code: VaultEnvelopeError.Code)] = [
        ("wrappedDeks", .recipientsAltered),
        ("updatedUtc", .timestampAltered),
        ("hint", .hintAltered),
        ("counter", .counterAltered),
        ("dek_seals", .counterAltered),
    ]
    /// Bytes of one truncated HMAC-SHA256 in `macs`.
    static let macByteCount = 16
    /// Bytes of the whole `macs` member.
    static var macsByteCount: Int { macedMembers.count * macByteCount }

    private static let macKeyInfo = Data("WalletVault-v1 header MAC key".utf8)
    private static let macDomain = Array("WalletVault-v1-MAC".utf8) + [0]
    private static let aadDomain = Array("WalletVault-v1-AAD".utf8) + [0]

    /// HMAC-SHA256 keyed with the MAC key and not yet given a message: each member's MAC continues a copy.
    private let keyedMAC: HMAC<SHA256>

    /// Derives the MAC key from the DEK with HKDF-SHA256 (empty salt).
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if HKDF fails.
    init(dek: SymmetricKey) throws(VaultEnvelopeError) {
        do {
            let macKey = try HKDF<SHA256>.deriveKey(inputKeyMaterial: dek, salt: Data(), info: Self.macKeyInfo, outputByteCount: 32)
            keyedMAC = HMAC(key: macKey)
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "cannot derive the header MAC key")
        }
    }

    /// The `macs` member's bytes for a header (an absent member, such as no `hint`, has its own encoding).
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if a member holds a fractional number.
    func macs(for header: JSONValue) throws(VaultEnvelopeError) -> Data {
        var output = Data(capacity: Self.macsByteCount)
        for member in Self.macedMembers {
            output.append(try mac(member.name, header[member.name]))
        }
        return output
    }

    /// Checks each member's MAC and reports the first member that does not match.
    ///
    /// - Throws: `VaultEnvelopeError` with the member's code (`.recipientsAltered`, `.timestampAltered`,
    ///   `.hintAltered`, `.counterAltered`).
    func verify(macs: Data, header: JSONValue) throws(VaultEnvelopeError) {
        for (index, member) in Self.macedMembers.enumerated() {
            let expected = try mac(member.name, header[member.name])
            let start = macs.startIndex + index * Self.macByteCount
            let stored = macs[start..<start + Self.macByteCount]
            // Constant time, though a forged MAC would still fail the GCM tag that follows.
            let difference = zip(expected, stored).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) }
            guard difference == 0 else {
                throw VaultEnvelopeError(member.code, "\(member.name) is not what the writer authenticated")
            }
        }
    }

    private func mac(_ name: String, _ value: JSONValue?) throws(VaultEnvelopeError) -> Data {
        var input = Self.macDomain
        CanonicalEncoding.appendLengthPrefixed(name, into: &input)
        if let value {
            try CanonicalEncoding.encode(value, into: &input)
        } else {
            input.append(UInt8(ascii: "x"))
        }
        var code = keyedMAC
        code.update(data: input)
        // Data(_:) of the code: CryptoKit's HashedAuthenticationCode is bytes, not Data.
        return Data(code.finalize()).prefix(Self.macByteCount)
    }

    /// The AES-GCM additional data: a domain label, then the canonical encoding of every header member
    /// (everything but `cipher`, `iv` and `tag`, `macs` included).
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if a member holds a fractional number.
    static func additionalData(header: JSONValue) throws(VaultEnvelopeError) -> Data {
        var output = aadDomain
        try CanonicalEncoding.encode(header, into: &output)
        return Data(output)
    }
}
