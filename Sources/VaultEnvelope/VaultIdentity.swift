import Foundation
import VaultCore
import VaultCrypto

/// Who a vault is and what its members share: the `vault_id`, the current secret epoch and the secrets of the
/// last epochs (FORMAT.md §11).
///
/// Held in memory beside the DEK; the secrets never leave the process except sealed into a blob's
/// `vault_secret` member.
public struct VaultIdentity: Sendable {
    /// How many epochs' secrets a blob carries: a member at most this many rotations behind can still check.
    public static let carriedEpochs = 16
    static let idByteCount = 16
    static let secretByteCount = 32

    /// `vault_id`: base64url of 16 random bytes.
    public let vaultID: String
    /// The current epoch: 1 at creation, one more at every rotation.
    public let epoch: UInt64
    /// The secrets of epochs `epoch - secrets.count + 1 … epoch`, oldest first.
    private let secrets: [Data]
    private let rawID: Data
    /// The 16 bytes `vault_id` encodes.
    var rawVaultID: Data { rawID }

    private static let sealInfo = Data("WalletVault-v1 vault secret".utf8)
    private static let anchorDomain = Data("WalletVault-v1 anchor".utf8) + [0]
    private static let confirmationDomain = Data("WalletVault-v1 pairing confirmation v2".utf8) + [0]
    private static let writeKeyInfo = Data("WalletVault-v1 write key".utf8) + [0]

    /// An identity from its parts; `secrets` are those of epochs `epoch - secrets.count + 1 … epoch`.
    init(rawID: Data, epoch: UInt64, secrets: [Data]) {
        self.rawID = rawID
        vaultID = Base64URL.encode(rawID)
        self.epoch = epoch
        self.secrets = secrets
    }

    /// A new vault's identity: a random id and the first secret, epoch 1.
    public static func create() -> VaultIdentity {
        VaultIdentity(
            rawID: SecureRandom.bytes(count: idByteCount), epoch: 1, secrets: [SecureRandom.bytes(count: secretByteCount)])
    }

    /// The identity after a rotation: a fresh secret for the next epoch, the oldest carried one dropped past 16.
    public func rotated() -> VaultIdentity {
        let kept = Array((secrets + [SecureRandom.bytes(count: Self.secretByteCount)]).suffix(Self.carriedEpochs))
        return VaultIdentity(rawID: rawID, epoch: epoch + 1, secrets: kept)
    }

    /// The anchor of the current epoch, what a reader pins after accepting this identity.
    public var anchor: VaultAnchor { anchor(atEpoch: epoch)! }

    /// The anchor of an earlier carried epoch, or nil when that epoch's secret is no longer carried.
    public func anchor(atEpoch wanted: UInt64) -> VaultAnchor? {
        guard wanted <= epoch, epoch - wanted < UInt64(secrets.count) else { return nil }
        let secret = secrets[secrets.count - 1 - Int(epoch - wanted)]
        let fingerprint = Data(SHA256.hash(data: Self.anchorDomain + rawID + Self.bigEndian(wanted) + secret))
        return VaultAnchor(vaultID: vaultID, epoch: wanted, fingerprint: fingerprint)
    }

    /// The six digits the approver shows and the new device must be given, as `123 456` (FORMAT.md §11.4).
    ///
    /// `kekID` is the `kek_id` of the entry the approver added for the new device, and `blobDigest` the SHA-256 of
    /// the exact blob text that carries it: the code confirms that blob and that entry, whatever the key's kind.
    public func confirmationCode(forEntry kekID: String, blobDigest: Data) -> String {
        let name = Data(kekID.utf8)
        let input = Self.confirmationDomain + rawID + Self.bigEndian(epoch) + Self.bigEndian32(UInt32(name.count)) + name + blobDigest
        let code = HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secrets[secrets.count - 1]))
        let number = Data(code).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let digits = String(format: "%06u", number)
        return "\(digits.prefix(3)) \(digits.suffix(3))"
    }

    /// The current epoch's write key, with which a member proves to the server that it may save or erase
    /// (FORMAT.md §11.8); every member derives the same key from the epoch's secret.
    ///
    /// The scalar is `HKDF-SHA256(ikm = S_e, salt = raw vault_id, info = "WalletVault-v1 write key" ‖ 0x00 ‖
    /// u64be(e) ‖ u8(i), L = 32)` for the first `i` = 0, 1, … that gives a valid P-256 scalar (1 … n − 1): the
    /// candidate testing of FIPS 186-5 A.2.2, so the key is uniform and one try fails with probability 2^-32.
    public var writeKey: P256.Signing.PrivateKey {
        let secret = SymmetricKey(data: secrets[secrets.count - 1])
        for attempt in UInt8.min...UInt8.max {
            // Only the OpenSSL backend's HKDF throws, and only for an output length outside 1 … 8160.
            guard
                let scalar = try? HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: secret, salt: rawID, info: Self.writeKeyInfo + Self.bigEndian(epoch) + [attempt],
                    outputByteCount: 32),
                let key = try? scalar.withUnsafeBytes({ try P256.Signing.PrivateKey(rawRepresentation: $0) })
            else { continue }
            return key
        }
        // 256 candidates all out of range: probability 2^-8192.
        preconditionFailure("no P-256 scalar among 256 HKDF outputs")
    }

    // MARK: The vault_secret member

    /// The `vault_secret` member's bytes: the carried secrets sealed under a key derived from the DEK.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if a primitive fails.
    func sealed(dek: SymmetricKey) throws(VaultEnvelopeError) -> Data {
        do {
            let box = try AES.GCM.seal(secrets.reduce(Data(), +), using: try Self.sealKey(dek), authenticating: additionalData)
            return box.nonce.withUnsafeBytes { Data($0) } + box.ciphertext + box.tag
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "sealing the vault secret failed: \(CryptoError(classifying: error))")
        }
    }

    /// Opens a blob's `vault_secret` with its DEK.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` for a `vault_id` that is not 16 bytes, a member of the wrong
    ///   length for the epoch, or one that does not open under the DEK.
    init(vaultID: String, epoch: UInt64, sealed: Data, dek: SymmetricKey) throws(VaultEnvelopeError) {
        guard let rawID = Base64URL.decode(vaultID), rawID.count == Self.idByteCount else {
            throw VaultEnvelopeError(.malformed, "vault_id must be base64url of \(Self.idByteCount) bytes")
        }
        let count = Self.carriedCount(epoch: epoch)
        guard sealed.count == Self.sealedByteCount(epoch: epoch) else {
            throw VaultEnvelopeError(.malformed, "vault_secret must be \(Self.sealedByteCount(epoch: epoch)) bytes for epoch \(epoch)")
        }
        let plain: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: sealed.prefix(12)), ciphertext: sealed.dropFirst(12).dropLast(16),
                tag: sealed.suffix(16))
            plain = try AES.GCM.open(box, using: try Self.sealKey(dek), authenticating: Self.additionalData(rawID, epoch))
        } catch {
            throw VaultEnvelopeError(.malformed, "vault_secret does not open under this vault's DEK")
        }
        let secrets = (0..<count).map { index in
            Data(plain[plain.startIndex + index * Self.secretByteCount..<plain.startIndex + (index + 1) * Self.secretByteCount])
        }
        self.init(rawID: rawID, epoch: epoch, secrets: secrets)
    }

    /// How many secrets a blob of `epoch` carries.
    static func carriedCount(epoch: UInt64) -> Int { Int(min(epoch, UInt64(carriedEpochs))) }

    /// The exact length of `vault_secret` for `epoch`: IV, the carried secrets, tag.
    static func sealedByteCount(epoch: UInt64) -> Int { 12 + carriedCount(epoch: epoch) * secretByteCount + 16 }

    private var additionalData: Data { Self.additionalData(rawID, epoch) }

    private static func additionalData(_ rawID: Data, _ epoch: UInt64) -> Data {
        sealInfo + [0] + rawID + bigEndian(epoch)
    }

    private static func sealKey(_ dek: SymmetricKey) throws -> SymmetricKey {
        try HKDF<SHA256>.deriveKey(inputKeyMaterial: dek, salt: Data(), info: sealInfo, outputByteCount: 32)
    }

    private static func bigEndian(_ value: UInt64) -> Data {
        withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }

    private static func bigEndian32(_ value: UInt32) -> Data {
        withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }
}
