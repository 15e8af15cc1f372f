import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope

/// What a new device shows so that a device holding the vault can enroll it: its P-256 public key,
/// a label, and a comparison value both screens display for the user to compare.
///
/// The value is 64 bits of a hash of the public key, so a request swapped in transit shows a
/// different value on the approving device than on the new one.
public struct PairingRequest: Sendable {
    private static let prefix = "wvpair1"

    /// The new device's public key.
    public let publicKey: P256.KeyAgreement.PublicKey
    /// The new device's label, e.g. "Pixel 9".
    public let label: String

    /// Creates the request a device with `device` as its key shows.
    public init(device: any DeviceKey, label: String) {
        publicKey = device.pairingPublicKey
        self.label = label
    }

    /// Reads a request from its text form.
    ///
    /// - Throws: `SyncError` `.invalidInput` for anything that is not a well-formed request.
    public init(encoded text: String) throws(SyncError) {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.prefix, let raw = Base64URL.decode(parts[1]), let labelBytes = Base64URL.decode(parts[2]),
            let label = String(data: labelBytes, encoding: .utf8), label.count <= 256
        else { throw SyncError(.invalidInput, "not a pairing request") }
        do { publicKey = try P256.KeyAgreement.PublicKey(rawRepresentation: raw) } catch {
            throw SyncError(.invalidInput, "the pairing request's key is not a P-256 point")
        }
        self.label = label
    }

    /// The text form to show or send: `wvpair1.<public key>.<label>`, base64url.
    public var encoded: String {
        "\(Self.prefix).\(Base64URL.encode(publicKey.rawRepresentation)).\(Base64URL.encode(Data(label.utf8)))"
    }

    /// Twenty digits in five groups of four (`0604 0512 8232 3547 2833`), 64 bits of the public key's hash, that
    /// both devices display for the user to compare (FORMAT.md §11.4).
    ///
    /// Whoever carries the request text (a chat, a clipboard, the server) could otherwise swap in a key of its own:
    /// finding one that shows the same twenty digits takes about 2^64 tries.
    public var shortAuthenticationString: String {
        let digest = SHA256.hash(data: Self.comparisonDomain + publicKey.rawRepresentation)
        let number = Data(digest).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let digits = Array(String(repeating: "0", count: 20 - String(number).count) + String(number))
        return stride(from: 0, to: 20, by: 4).map { String(digits[$0..<$0 + 4]) }.joined(separator: " ")
    }

    private static let comparisonDomain = Data("WalletVault-v2 pairing comparison".utf8) + [0]

    /// The recipient to enroll.
    var recipient: PublicKeyRecipient { PublicKeyRecipient(publicKey) }
}
