import VaultCore

/// What a DEK rotation did with each entry of the previous version.
public struct DEKRotation: Sendable, Equatable {
    /// Why an entry was not re-wrapped for the new DEK (and so is absent from the new blob).
    public enum Reason: Sendable, Equatable {
        /// No key with this `kek_id` was offered and the entry names no public key to wrap to.
        case keyNotAvailable
        /// The key needs its holder (a prompt) and prompts were not allowed.
        case needsHolder
        /// The key failed to wrap, with the error's code (`.invalidated`, for example).
        case failed(VaultEnvelopeError.Code)
    }

    /// An entry of the previous version that the new version lacks.
    public struct Skipped: Sendable, Equatable {
        /// The entry's `kek_id`.
        public let kekID: String
        /// The entry's label (empty for the seed's form).
        public let label: String
        /// Why it was not re-wrapped.
        public let reason: Reason
    }

    /// The `kek_id`s wrapped for the new DEK, in blob order.
    public let rewrapped: [String]
    /// The entries left out; their holders must be enrolled again by a device that has the vault open.
    public let skipped: [Skipped]
}
