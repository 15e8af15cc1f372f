// A forger's tool, for tests only: it needs VaultEnvelope's internals, which only a debug build exposes to
// `@testable import`; release builds (make bench) compile this target without it.
#if DEBUG
    import Foundation
    import VaultCore
    import VaultCrypto
    import VaultJSON

    @testable import VaultEnvelope

    /// Writes the extended form as it was before anchors (no `vault_id`, `epoch`, `vault_secret`): what a forger who
    /// knows only a member's public key could always write, and what pre-anchor writers left on servers.
    public enum PreAnchorBlob {
        /// A pre-anchor blob of `plaintext` under `dek` with `entries`, at `counter`.
        public static func seal(
            _ plaintext: Data, dek: SymmetricKey, entries: [WrappedKey], counter: UInt64, hint: String? = "Forger"
        ) throws -> Data {
            var header: [(key: String, value: JSONValue)] = [
                ("v", .integer(1)), ("wrappedDeks", .array(entries.map(\.jsonValue))),
                ("updatedUtc", .string("2026-12-01T00:00:00.000Z")),
            ]
            if let hint { header.append(("hint", .string(hint))) }
            header += [("counter", .integer(Int64(counter))), ("dek_seals", .integer(1))]
            let macs = try HeaderAuthenticator(dek: dek).macs(for: .object(header))
            header.append(("macs", .string(Base64URL.encode(macs))))
            let box = try AES.GCM.seal(
                plaintext, using: dek, authenticating: try HeaderAuthenticator.additionalData(header: .object(header)))
            let sealed: [(key: String, value: JSONValue)] = [
                ("iv", .string(Base64URL.encode(box.nonce.withUnsafeBytes { Data($0) }))),
                ("tag", .string(Base64URL.encode(box.tag))), ("cipher", .string(Base64URL.encode(box.ciphertext))),
            ]
            return JSONSerializer.data(of: .object(header + sealed))
        }

        /// An entry wrapping `dek` for `recipient`, labeled and dated as a writer stamps it.
        public static func entry(_ recipient: any KeyWrapping, dek: SymmetricKey) async throws -> WrappedKey {
            try await recipient.wrap(dek).labeled("Forged", created: UTCTimestamp(millisecondsSinceEpoch: 1_786_561_200_000))
        }
    }
#endif
