import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope

/// What a new device shows so that a device holding the vault can enroll it: its P-256 public key,
/// a label, and a short authentication string both screens display for the user to compare.
///
/// The string is derived from the public key alone, so a request swapped in transit shows a
/// different string on the approving device than on the new one.
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

    /// Six digits, as `123 456`, that both devices display for the user to compare.
    public var shortAuthenticationString: String {
        let digest = SHA256.hash(data: Data("walletvault-pairing-sas-v1".utf8) + publicKey.rawRepresentation)
        let number = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let digits = String(format: "%06u", number)
        return "\(digits.prefix(3)) \(digits.suffix(3))"
    }

    /// The recipient to enroll.
    var recipient: PublicKeyRecipient { PublicKeyRecipient(publicKey) }
}
