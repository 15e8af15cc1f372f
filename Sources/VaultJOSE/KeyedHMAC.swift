import Foundation
import VaultCrypto

/// An HMAC-SHA256 keyed once, copied for each message: HS256 tokens are signed and checked by the thousand under
/// one key, and keying (on OpenSSL: fetching HMAC and SHA-256 by name, hashing the padded key) was most of what a
/// short MAC cost. A copy of a keyed `HMAC` goes on independently (on OpenSSL it duplicates the keyed context,
/// `EVP_MAC_CTX_dup`, with no fetch and no key hashing).
struct KeyedHMAC: @unchecked Sendable {
    // @unchecked: `HMAC` is a value; the template is never updated, only copied, and each copy is local to one call.
    private let template: HMAC<SHA256>

    init(key: SymmetricKey) {
        template = HMAC<SHA256>(key: key)
    }

    /// The 32-byte code of `data`.
    func code(for data: some DataProtocol) -> Data {
        var mac = template
        mac.update(data: data)
        return Data(mac.finalize())
    }

    /// Whether `code` is the full 32-byte code of `data`, compared in constant time.
    func isValid(_ code: some DataProtocol, for data: some DataProtocol) -> Bool {
        let expected = self.code(for: data)
        guard code.count == expected.count else { return false }
        // Folds every byte's difference, so the time does not depend on where the codes differ.
        var difference: UInt8 = 0
        for (left, right) in zip(expected, code) { difference |= left ^ right }
        return difference == 0
    }
}
