import Foundation

/// Derives a key from a password with Argon2id (RFC 9106, version 0x13); the passphrase key takes one.
///
/// Linux has libargon2 (`LibArgon2id`). No Apple framework has Argon2id, so an app on Apple platforms that offers
/// passphrases supplies an implementation it trusts (a vetted library it bundles); an app that supplies none still
/// has every other key kind, and a passphrase then fails with `.unsupportedAlgorithm`, never a crash.
public protocol Argon2idDeriving: Sendable {
    /// Returns `outputByteCount` bytes of Argon2id(password, salt) at these costs.
    ///
    /// - Throws: what the implementation throws for parameters it refuses or memory it cannot get.
    func deriveKey(password: Data, salt: Data, iterations: Int, memoryKiB: Int, parallelism: Int, outputByteCount: Int) throws
        -> SymmetricKey
}

/// The Argon2id this platform has built in.
public enum Argon2idPlatform {
    /// libargon2 on Linux; nil on Apple platforms, where the app passes its own.
    public static let builtIn: (any Argon2idDeriving)? = {
        #if canImport(CArgon2)
            LibArgon2id()
        #else
            nil
        #endif
    }()
}
