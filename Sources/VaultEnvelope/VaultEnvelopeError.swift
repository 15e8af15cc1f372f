import VaultCore
import VaultCrypto

/// Why a vault blob could not be sealed or opened, or a key-encryption key could not be used.
///
/// The code is stable and what tests and callers compare; the reason is for people and names fields,
/// sizes and counters, never key material, plaintext or ciphertext.
public typealias VaultEnvelopeError = CodedError<VaultEnvelopeErrorCode>

/// The codes of `VaultEnvelopeError`, stable across releases.
public enum VaultEnvelopeErrorCode: String, Sendable {
    /// The blob is not JSON, or JSON with a repeated member name.
    case invalidJSON
    /// The blob fails the seed's shape rules, the only rules the server checks.
    case invalidShape
    /// The blob has the seed's shape but a member of the extended form is missing, unknown or mis-sized.
    case malformed
    /// An entry names an `alg` this reader does not implement.
    case unsupportedAlgorithm
    /// Argon2id costs below the floor (or above the ceiling) this reader accepts, or an RSA key below 2048 bits.
    case weakParameters
    /// None of the offered keys has an entry in `wrappedDeks`.
    case noMatchingKey
    /// A key has an entry but cannot unwrap it: a different key with the same id, or an altered entry.
    case unwrapFailed
    /// The platform destroyed the key (enrollment change, key file removed); re-enroll from another entry.
    case invalidated
    /// The key's holder declined to unlock it (a cancelled biometric prompt); nothing changed, try again later.
    case userCanceled
    /// A key file is missing, unreadable, or readable by other users.
    case keyStorage
    /// `wrappedDeks` differs from what the writer authenticated: a recipient added, dropped, swapped or edited.
    case recipientsAltered
    /// `updatedUtc` differs from what the writer authenticated.
    case timestampAltered
    /// `hint` differs from what the writer authenticated.
    case hintAltered
    /// `counter` or `dek_seals` differs from what the writer authenticated.
    case counterAltered
    /// The vault ciphertext, IV or tag was altered (or, in the seed's form, anything at all).
    case ciphertextAltered
    /// The blob's counter is lower than one this reader already accepted for the vault.
    case rollback
    /// Sealing would produce a blob larger than the server accepts.
    case blobTooLarge
    /// A recovery code was mistyped or is not a recovery code.
    case invalidRecoveryCode
    /// Sealing would leave no entry that can unwrap the DEK.
    case noRecipients
    /// A primitive failed for a reason none of the codes above describes.
    case cryptoFailure
    /// The blob's counter is more than `VaultOpener.maxCounterStep` above the highest this reader accepted: no chain
    /// of honest writes gets there, and a counter near 2^53 − 1 would leave no room for another write.
    case counterJump
    /// A blob other than the one this reader accepted or wrote at the same counter: the server serves two versions
    /// under one number (a fork, or a member's write it dropped); never taken silently.
    case forkDetected
    /// A reader that has pinned its vault's anchor got a blob without one (the seed form, or from before anchors),
    /// or one of an older secret epoch: a server serving an old version (FORMAT.md §11.3).
    case downgrade
    /// The blob names another vault than the one this reader pinned: a server serving another vault of the user.
    case wrongVault
    /// The blob came through a public-key entry and this reader has no anchor to check its writer against (or
    /// fell more than 16 secret rotations behind): confirm the vault with a member device first (§11.4).
    case unconfirmedVault
    /// The blob's writer does not hold the vault secret this reader pinned: a forgery, or a revoked device's.
    case writerNotMember
    /// The confirmation code typed on a new device differs from the one its blob gives: nothing was stored.
    case pairingMismatch
    /// The blob's passphrase entries would make one open derive more than a reader allows (more than four
    /// entries, or more Argon2id memory × passes in total than four entries at the default costs); refused before
    /// any derivation (FORMAT.md §7.3).
    case workLimitExceeded
}

extension CodedError where ErrorCode == VaultEnvelopeErrorCode {
    /// Maps a primitive's failure while unwrapping to `unwrapFailed` when it means "wrong key or altered entry".
    static func unwrapping(_ error: CryptoError, _ context: String) -> VaultEnvelopeError {
        switch error.code {
        case .authenticationFailure, .invalidParameter:
            VaultEnvelopeError(.unwrapFailed, "\(context): the key does not unwrap this entry")
        case .invalidPublicKey:
            VaultEnvelopeError(.malformed, "\(context): the entry's public key is not a valid point")
        default:
            VaultEnvelopeError(.cryptoFailure, "\(context): \(error.description)")
        }
    }
}
