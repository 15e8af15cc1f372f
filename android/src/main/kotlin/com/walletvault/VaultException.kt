package com.walletvault

/**
 * Every failure the library reports: nothing else leaves a public call, except `CancellationException` when the
 * caller's coroutine was cancelled (which coroutines require to pass through).
 *
 * Three families, each with stable codes: [VaultException] (a blob or a key, FORMAT.md §8), [BackupError] (the server
 * or the network, from [BackupClient] and [SessionTokenProvider]) and [SyncException] (what a [VaultSyncEngine] call
 * failed with, the code an app decides on; the other two arrive inside it as [SyncException.backupError] or cause).
 * Messages never contain tokens, keys, plaintext or vault bytes.
 */
sealed class WalletVaultException(message: String, cause: Throwable? = null) : Exception(message, cause)

/**
 * Why a blob could not be read, opened or written, or a key could not be used (FORMAT.md §8).
 *
 * One subclass per stable code, the same codes as the Swift `VaultEnvelopeErrorCode`; the message names
 * members, sizes and counters, never key material, plaintext or ciphertext.
 */
sealed class VaultException(val code: String, message: String, cause: Throwable? = null) : WalletVaultException("$code: $message", cause) {
    /** Not JSON, JSON with a repeated member name, nested too deep, or not UTF-8. */
    class InvalidJson(message: String) : VaultException("invalidJSON", message)
    /** Fails the seed's shape rules (§3.1), the only rules the server checks. */
    class InvalidShape(message: String) : VaultException("invalidShape", message)
    /** A member of the extended form is missing, unknown or mis-sized. */
    class Malformed(message: String) : VaultException("malformed", message)
    /** An entry names an `alg` (or `kdf`) this reader does not implement. */
    class UnsupportedAlgorithm(message: String) : VaultException("unsupportedAlgorithm", message)
    /** Argon2id costs outside the floor and ceiling of §7.3, or an RSA key below 2048 bits (§4.1). */
    class WeakParameters(message: String) : VaultException("weakParameters", message)
    /**
     * §7.3: the blob's passphrase entries would make one open derive more than a reader allows (more than four, or
     * more Argon2id memory × passes in total than four entries at the default costs); refused before any derivation.
     */
    class WorkLimitExceeded(message: String) : VaultException("workLimitExceeded", message)
    /** None of the offered keys has an entry. */
    class NoMatchingKey(message: String) : VaultException("noMatchingKey", message)
    /** A key has an entry but cannot unwrap it. */
    class UnwrapFailed(message: String) : VaultException("unwrapFailed", message)
    /** The platform destroyed the key (a Keystore key after a biometric enrollment change). */
    class Invalidated(message: String, cause: Throwable? = null) : VaultException("invalidated", message, cause)
    /**
     * The holder declined to unlock the key: a cancelled biometric prompt. A [KeystoreKek]'s authenticator throws it
     * for the prompt's user-cancel outcomes; the engine reports `AUTHENTICATION_CANCELED`.
     */
    class UserCanceled(message: String, cause: Throwable? = null) : VaultException("userCanceled", message, cause)
    /** A key could not be read from where it is kept. */
    class KeyStorage(message: String, cause: Throwable? = null) : VaultException("keyStorage", message, cause)
    /** `wrappedDeks` is not what the writer authenticated. */
    class RecipientsAltered(message: String) : VaultException("recipientsAltered", message)
    /** `updatedUtc` is not what the writer authenticated. */
    class TimestampAltered(message: String) : VaultException("timestampAltered", message)
    /** `hint` is not what the writer authenticated. */
    class HintAltered(message: String) : VaultException("hintAltered", message)
    /** `counter` or `dek_seals` is not what the writer authenticated. */
    class CounterAltered(message: String) : VaultException("counterAltered", message)
    /** The vault ciphertext, IV or tag (or, in the seed form, anything) was altered. */
    class CiphertextAltered(message: String) : VaultException("ciphertextAltered", message)
    /** The blob's counter is below one this reader already accepted. */
    class Rollback(message: String) : VaultException("rollback", message)
    /**
     * §11.3: with an anchor pinned, a blob without `vault_id` (seed form or pre-anchor extended form) or with an
     * `epoch` below the pinned one.
     */
    class Downgrade(message: String) : VaultException("downgrade", message)
    /**
     * §11.7: a valid version whose counter equals one this reader accepted or wrote, under another digest: the server
     * serves two versions under one number (or dropped a member's write). Refused after the tag verified.
     */
    /**
     * §8 step 3: the blob's counter is more than [VaultOpener.MAX_COUNTER_STEP] above the highest accepted; a counter
     * near 2^53 − 1 would leave no room for another write.
     */
    class CounterJump(message: String) : VaultException("counterJump", message)
    class ForkDetected(message: String) : VaultException("forkDetected", message)
    /** §11.3: the blob's `vault_id` is not the one this reader pinned (another vault of the same user). */
    class WrongVault(message: String) : VaultException("wrongVault", message)
    /**
     * §11.3: the blob cannot be tied to the vault this reader belongs to: an anchored blob opened through a
     * public-key entry with no anchor pinned, or one that no longer carries the pinned epoch's secret. Confirm
     * (§11.4 pairing confirmation) before reading it.
     */
    class UnconfirmedVault(message: String) : VaultException("unconfirmedVault", message)
    /** §11.3: the blob's vault secret for the pinned epoch is not the pinned one: its writer is not a member. */
    class WriterNotMember(message: String) : VaultException("writerNotMember", message)
    /** §11.4: the confirmation code typed on the new device is not the one computed from the blob. */
    class PairingMismatch(message: String) : VaultException("pairingMismatch", message)
    /** Sealing would exceed the server's limit. */
    class BlobTooLarge(message: String) : VaultException("blobTooLarge", message)
    /** A recovery code was mistyped or is not a recovery code. */
    class InvalidRecoveryCode(message: String) : VaultException("invalidRecoveryCode", message)
    /** Sealing would leave no entry, or two entries share a kek_id. */
    class NoRecipients(message: String) : VaultException("noRecipients", message)
    /** A primitive failed for another reason. */
    class CryptoFailure(message: String, cause: Throwable? = null) : VaultException("cryptoFailure", message, cause)

    /**
     * This device's key is intact but cannot be used now (biometrics locked out, no sensor available, a transient Keystore
     * failure); the code is `keyStorage`, as the Swift envelope layer reports it, and the sync engine says `NOT_NOW`.
     */
    public class KeyNotNow(message: String, cause: Throwable? = null) : VaultException("keyStorage", message, cause)
}

/** Why a sync-engine call failed; [code] is stable, [backupError] the server failure behind it. */
class SyncException(val code: Code, reason: String, val backupError: BackupError? = null, cause: Throwable? = null) :
    WalletVaultException("${code.name}: $reason" + (backupError?.let { " (${it.message})" } ?: ""), cause) {
    /**
     * What failed; the names are the Swift `SyncError.Code`'s, except [OFFLINE].
     *
     * [CONFIRMATION_REQUIRED] (`unconfirmedVault` underneath): the vault must be confirmed on this device first
     * ([VaultSyncEngine.confirmPairing] with the code the approving device shows, FORMAT.md §11.4);
     * [CONFIRMATION_MISMATCH] (`pairingMismatch`): the code typed is not the vault's, nothing was stored;
     * [FORK_DETECTED] (`forkDetected`): the server serves another version under a counter this device accepted;
     * [REMOVED_FROM_VAULT] (`removedFromVault`): this device's key was in the vault it last synced and another device
     * removed it (revocation): pair again or recover, the message names the writer's hint as the blob states it;
     * [AUTHENTICATION_CANCELED] (`authenticationCanceled`): the user declined to unlock this device's key (a cancelled
     * biometric prompt, [VaultException.UserCanceled]): nothing changed, ask again later, not a reason to recover;
     * [NOT_NOW] (`notNow`): this device's key is intact but cannot be used now (biometrics locked out, no sensor, a
     * transient Keystore failure, [VaultException.KeyNotNow]): nothing changed, try again later, never recover;
     * [OFFLINE]: no answer from the server after the retries, or the app's own OIDC token source failed with a network
     * error: nothing changed, sync again when the network is back (the Swift SDK reports this as `server` with
     * `BackupError.transport`; a refused token is [SERVER] with [BackupError.Unauthorized], the user is signed out).
     */
    enum class Code { NO_VAULT, NO_ACCESS, KEY_INVALIDATED, ROLLBACK_DETECTED, TAMPERED, TOO_LARGE, SERVER, UNRESOLVED_CONFLICT, LOCAL_STORAGE, INVALID_INPUT,
        CONFIRMATION_REQUIRED, CONFIRMATION_MISMATCH, FORK_DETECTED, REMOVED_FROM_VAULT, AUTHENTICATION_CANCELED, NOT_NOW, OFFLINE }
}

/** Why a call to the server failed (the Swift SDK's `BackupError`). */
sealed class BackupError(message: String, cause: Throwable? = null) : WalletVaultException(message, cause) {
    object InvalidJson : BackupError("the server refused the blob as invalid JSON")
    class InvalidVaultShape(val detail: String) : BackupError("the server refused the blob's shape: $detail")
    class BlobTooLarge(val bytes: Int?, val limit: Int?) : BackupError("the blob is too large" + (if (bytes != null) " ($bytes bytes, limit $limit)" else ""))
    class RateLimited(val retryAfterSeconds: Int) : BackupError("rate limited; retry after $retryAfterSeconds s")
    object NotFound : BackupError("nothing is stored")
    /** 403 `write_proof_required`: the stored version names a write key and this request proved none by it (§11.8). */
    object WriterRefused : BackupError("the server takes saves and erasures of this vault only from its current members")
    class Conflict(val currentSyncId: String?, val currentUpdatedUtc: String?) : BackupError("another version was saved first ($currentSyncId)")
    /** 401 twice, or the OIDC token refused: the user is signed out and must sign in again. */
    object Unauthorized : BackupError("the server refused the token")
    class Rejected(val status: Int, val code: String) : BackupError("the server answered $status $code")
    class ServerUnavailable(val status: Int) : BackupError("the server answered $status")
    /**
     * No HTTP answer after the retries, or the app's OIDC token source failed with a network error (an `IOException`
     * in its cause chain): the device is offline or the server unreachable; [reason] names the exception's class.
     */
    class Transport(val reason: String, cause: Throwable? = null) : BackupError("network failure: $reason", cause)
}
