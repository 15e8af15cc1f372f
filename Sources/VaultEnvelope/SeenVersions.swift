import Foundation
import VaultCrypto

/// What a counter store remembers of each version a device accepted or wrote: a digest per counter, the newest
/// `seenBlobsKept`, so that a second version under a counter already accepted is a detected fork.
enum SeenVersions {
    private static let domain = Data("WalletVault-v1 version digest".utf8) + [0]
    /// A version digest is a SHA-256.
    static let digestByteCount = 32

    /// SHA-256 over the version's additional data (FORMAT.md §5.3: every header member), IV and tag; nil for the
    /// seed form, which has no counter.
    ///
    /// Not over the whole text: hashing a 1 MiB ciphertext would double an open's cost, and the tag already binds
    /// the ciphertext for everyone without the DEK. Only a holder of the current DEK, a member who may write any
    /// version anyway, could find a second ciphertext under the same tag.
    /// - Throws: `VaultEnvelopeError` `.malformed` when the header cannot be encoded (refused by the parse before).
    static func digest(of envelope: VaultEnvelope) throws(VaultEnvelopeError) -> Data? {
        guard envelope.counter != nil, envelope.macs != nil else { return nil }
        let box = envelope.sealedBox
        let aad = try HeaderAuthenticator.additionalData(header: envelope.header)
        return Data(SHA256.hash(data: domain + aad + box.nonce.withUnsafeBytes { Data($0) } + box.tag))
    }

    /// `seen` with `digest` at `counter`, the lowest counters dropped past `seenBlobsKept`.
    static func adding(_ digest: Data, counter: UInt64, to seen: [UInt64: Data]) -> [UInt64: Data] {
        var updated = seen
        updated[counter] = digest
        while updated.count > seenBlobsKept, let lowest = updated.keys.min() { updated[lowest] = nil }
        return updated
    }
}
