import Foundation

/// Checks an RSA modulus for the ROCA fingerprint (CVE-2017-15361) of Infineon-generated keys.
///
/// Such a modulus is, modulo each of these small primes, a power of 65537; a random modulus
/// passes all of them with negligible probability. Keys with the fingerprint are factorable.
enum RSAModulusCheck {
    static let rocaPrimes: [Int] = [
        3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101,
        103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167,
    ]

    /// Whether a big-endian modulus has the ROCA fingerprint.
    static func hasROCAFingerprint(_ modulus: Data) -> Bool {
        rocaPrimes.allSatisfy { prime in
            let residue = modulus.reduce(0) { ($0 * 256 + Int($1)) % prime }
            var power = 1
            var generated: Set<Int> = []
            repeat {
                generated.insert(power)
                power = power * (65537 % prime) % prime
            } while power != 1
            return generated.contains(residue)
        }
    }
}
