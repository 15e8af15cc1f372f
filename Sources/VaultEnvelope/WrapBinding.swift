import Foundation
import VaultCrypto

/// The vault and epoch a symmetric entry of an anchored blob was wrapped for (FORMAT.md §11.9): the entry wraps
/// `DEK ‖ raw vault_id ‖ u64be(epoch)`, so a wrap copied out of an older epoch's blob proves nothing about a newer
/// epoch, even to a reader that holds the key and pinned nothing.
struct WrapBinding: Equatable, Sendable {
    /// The length of a bound payload: a 32-byte DEK, a 16-byte `vault_id` and an 8-byte epoch.
    static let payloadByteCount = 56

    let rawVaultID: Data
    let epoch: UInt64

    /// The binding a writer gives the symmetric entries of a version of `identity`.
    init(_ identity: VaultIdentity) {
        rawVaultID = identity.rawVaultID
        epoch = identity.epoch
    }

    private init(rawVaultID: Data, epoch: UInt64) {
        self.rawVaultID = rawVaultID
        self.epoch = epoch
    }

    /// What `key` wraps for a version of `identity`: the bound payload for a symmetric key of an anchored vault, the
    /// bare DEK for a public-key recipient (anyone may write those, so a binding would prove nothing) or a vault
    /// without an identity yet.
    static func payload(_ dek: SymmetricKey, for key: any KeyWrapping, in identity: VaultIdentity?) -> SymmetricKey {
        guard key.algorithm.authenticatesWriter, let identity else { return dek }
        let binding = WrapBinding(identity)
        return dek.withUnsafeBytes { bytes in
            var payload = Data(bytes)
            payload.append(binding.rawVaultID)
            withUnsafeBytes(of: binding.epoch.bigEndian) { payload.append(contentsOf: $0) }
            defer { payload.resetBytes(in: payload.startIndex..<payload.endIndex) }
            return SymmetricKey(data: payload)
        }
    }

    /// Splits what an entry unwrapped into the DEK and, for a 56-byte payload, its binding.
    ///
    /// `symmetric` says whether the entry is a symmetric one (`KeyWrapAlgorithm.authenticatesWriter`).
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for a bound payload in a public-key entry, which writers never
    ///   make.
    static func split(_ payload: SymmetricKey, symmetric: Bool) throws(VaultEnvelopeError) -> (dek: SymmetricKey, binding: WrapBinding?) {
        guard payload.bitCount == payloadByteCount * 8 else { return (payload, nil) }
        guard symmetric else {
            throw VaultEnvelopeError(.unwrapFailed, "a public-key entry wraps a 32-byte DEK, not a bound payload")
        }
        return payload.withUnsafeBytes { raw in
            let bytes = Data(raw)
            let epoch = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return (SymmetricKey(data: bytes.prefix(32)), WrapBinding(rawVaultID: Data(bytes[32..<48]), epoch: epoch))
        }
    }

    /// Whether the entry a reader opened through proves its writer for this version (FORMAT.md §11.9).
    ///
    /// A symmetric entry of an anchored blob proves it only when bound to the blob's `vault_id` and epoch; an unbound
    /// one (writers before the binding) only at epoch 1, where no revocation happened, so no removed device holds an
    /// older epoch's wrap to copy. Above epoch 1 such an entry still opens the vault, as a public-key entry does,
    /// for a reader whose pinned anchor checks the writer.
    /// - Throws: `VaultEnvelopeError` `.writerNotMember` for a binding to another vault or epoch, or in a version
    ///   that names no vault: such an entry was made for another blob.
    static func provesWriter(
        _ binding: WrapBinding?, entryAuthenticatesWriter: Bool, identity: VaultIdentity?
    ) throws(VaultEnvelopeError) -> Bool {
        switch (binding, identity) {
        case (nil, nil):
            return entryAuthenticatesWriter
        case (let binding?, let identity?):
            guard binding == WrapBinding(identity) else {
                throw VaultEnvelopeError(
                    .writerNotMember, "the entry was wrapped for epoch \(binding.epoch) of a vault, not for this version's")
            }
            return entryAuthenticatesWriter
        case (nil, let identity?):
            return entryAuthenticatesWriter && identity.epoch == 1
        case (.some, nil):
            throw VaultEnvelopeError(.writerNotMember, "a bound entry in a version that names no vault")
        }
    }
}
