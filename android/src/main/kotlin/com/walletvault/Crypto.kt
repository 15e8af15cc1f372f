package com.walletvault

import org.bouncycastle.crypto.InvalidCipherTextException
import org.bouncycastle.crypto.digests.SHA256Digest
import org.bouncycastle.crypto.engines.AESEngine
import org.bouncycastle.crypto.engines.RFC3394WrapEngine
import org.bouncycastle.crypto.generators.HKDFBytesGenerator
import org.bouncycastle.crypto.params.HKDFParameters
import org.bouncycastle.crypto.params.KeyParameter
import java.math.BigInteger
import java.security.AlgorithmParameters
import java.security.GeneralSecurityException
import java.security.KeyFactory
import java.security.KeyPairGenerator
import java.security.MessageDigest
import java.security.PrivateKey
import java.security.PublicKey
import java.security.SecureRandom
import java.security.interfaces.ECPublicKey
import java.security.spec.ECGenParameterSpec
import java.security.spec.ECParameterSpec
import java.security.spec.ECPoint
import java.security.spec.ECPrivateKeySpec
import java.security.spec.ECPublicKeySpec
import java.security.spec.MGF1ParameterSpec
import java.security.spec.RSAPublicKeySpec
import javax.crypto.AEADBadTagException
import javax.crypto.Cipher
import javax.crypto.KeyAgreement
import javax.crypto.Mac
import javax.crypto.spec.GCMParameterSpec
import javax.crypto.spec.OAEPParameterSpec
import javax.crypto.spec.PSource
import javax.crypto.spec.SecretKeySpec

/** The primitives FORMAT.md §1 names, over javax.crypto / java.security (and BouncyCastle's RFC 3394 engine). */
internal object Crypto {
    val random = SecureRandom()

    fun randomBytes(count: Int): ByteArray = ByteArray(count).also { random.nextBytes(it) }

    fun utf8(text: String): ByteArray = text.toByteArray(Charsets.UTF_8)

    fun concat(vararg parts: ByteArray): ByteArray {
        var total = 0
        for (part in parts) total += part.size
        val out = ByteArray(total)
        var offset = 0
        for (part in parts) { System.arraycopy(part, 0, out, offset, part.size); offset += part.size }
        return out
    }

    fun u32be(n: Int): ByteArray = byteArrayOf((n ushr 24).toByte(), (n ushr 16).toByte(), (n ushr 8).toByte(), n.toByte())

    fun constantTimeEquals(a: ByteArray, b: ByteArray): Boolean = MessageDigest.isEqual(a, b)

    fun sha256(data: ByteArray): ByteArray = MessageDigest.getInstance("SHA-256").digest(data)

    fun hmac(key: ByteArray, message: ByteArray): ByteArray {
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(SecretKeySpec(key, "HmacSHA256"))
        return mac.doFinal(message)
    }

    /** HKDF-SHA256 (RFC 5869) by BouncyCastle; an empty salt is HashLen zero bytes (the RFC's default). */
    fun hkdf(ikm: ByteArray, salt: ByteArray, info: ByteArray, length: Int): ByteArray {
        val generator = HKDFBytesGenerator(SHA256Digest())
        generator.init(HKDFParameters(ikm, if (salt.isEmpty()) null else salt, info))
        val out = ByteArray(length)
        generator.generateBytes(out, 0, length)
        return out
    }

    /** AES-256-GCM seal with a fresh random 12-byte IV: (iv, ciphertext ‖ tag). */
    fun gcmSeal(key: ByteArray, plaintext: ByteArray, aad: ByteArray?): Pair<ByteArray, ByteArray> {
        val iv = randomBytes(12)
        val cipher = Cipher.getInstance("AES/GCM/NoPadding")
        cipher.init(Cipher.ENCRYPT_MODE, SecretKeySpec(key, "AES"), GCMParameterSpec(128, iv))
        if (aad != null && aad.isNotEmpty()) cipher.updateAAD(aad)
        return Pair(iv, cipher.doFinal(plaintext))
    }

    /** AES-256-GCM open of ciphertext ‖ tag; null when the tag does not verify. */
    fun gcmOpen(key: ByteArray, iv: ByteArray, ciphertextAndTag: ByteArray, aad: ByteArray?): ByteArray? {
        if (iv.size != 12 || ciphertextAndTag.size < 16) return null
        return try {
            val cipher = Cipher.getInstance("AES/GCM/NoPadding")
            cipher.init(Cipher.DECRYPT_MODE, SecretKeySpec(key, "AES"), GCMParameterSpec(128, iv))
            if (aad != null && aad.isNotEmpty()) cipher.updateAAD(aad)
            cipher.doFinal(ciphertextAndTag)
        } catch (e: AEADBadTagException) {
            null
        }
    }

    /** RFC 3394 AES key wrap with the default IV. */
    fun aesKeyWrap(key: ByteArray, dek: ByteArray): ByteArray {
        val engine = RFC3394WrapEngine(AESEngine())
        engine.init(true, KeyParameter(key))
        return engine.wrap(dek, 0, dek.size)
    }

    /** RFC 3394 unwrap; the result must be a 32-byte DEK or a 56-byte bound payload (FORMAT.md §4.1, §11.9). */
    fun aesKeyUnwrap(key: ByteArray, wrapped: ByteArray, context: String): ByteArray {
        if (wrapped.size != 40 && wrapped.size != 64) throw VaultException.UnwrapFailed("$context: dek_cipher is ${wrapped.size} bytes, not 40 or 64")
        val engine = RFC3394WrapEngine(AESEngine())
        engine.init(false, KeyParameter(key))
        return try {
            checkedPayload(engine.unwrap(wrapped, 0, wrapped.size), context)
        } catch (e: InvalidCipherTextException) {
            throw VaultException.UnwrapFailed("$context: the key does not unwrap this entry")
        }
    }

    /** A 32-byte DEK or a 56-byte [WrapBinding] payload, so a wrapped key of another size cannot downgrade the vault cipher. */
    fun checkedPayload(payload: ByteArray, context: String): ByteArray {
        if (payload.size != 32 && payload.size != WrapBinding.PAYLOAD_BYTES)
            throw VaultException.UnwrapFailed("$context: the unwrapped key is ${payload.size} bytes, neither a DEK (32) nor a bound payload (56)")
        return payload
    }

    // MARK: P-256

    val p256: ECParameterSpec by lazy {
        val parameters = AlgorithmParameters.getInstance("EC")
        parameters.init(ECGenParameterSpec("secp256r1"))
        parameters.getParameterSpec(ECParameterSpec::class.java)
    }
    private val P = BigInteger("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16)
    private val B = BigInteger("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b", 16)

    /** A P-256 public key from 32-byte coordinates; refused (`malformed`) unless the point is on the curve. */
    fun p256PublicKey(x: ByteArray, y: ByteArray, path: String): ECPublicKey {
        if (x.size != 32 || y.size != 32) throw VaultException.Malformed("$path coordinates must be 32 bytes each")
        val bx = BigInteger(1, x)
        val by = BigInteger(1, y)
        val onCurve = bx < P && by < P &&
            by.multiply(by).mod(P) == bx.pow(3).subtract(bx.multiply(BigInteger.valueOf(3))).add(B).mod(P)
        if (!onCurve) throw VaultException.Malformed("$path is not a point on P-256")
        return try {
            KeyFactory.getInstance("EC").generatePublic(ECPublicKeySpec(ECPoint(bx, by), p256)) as ECPublicKey
        } catch (e: GeneralSecurityException) {
            throw VaultException.Malformed("$path is not a usable P-256 key")
        }
    }

    fun p256PrivateKey(d: ByteArray): PrivateKey =
        KeyFactory.getInstance("EC").generatePrivate(ECPrivateKeySpec(BigInteger(1, d), p256))

    fun p256Generate(): java.security.KeyPair {
        val generator = KeyPairGenerator.getInstance("EC")
        generator.initialize(ECGenParameterSpec("secp256r1"), random)
        return generator.generateKeyPair()
    }

    /** The 32-byte big-endian form of a coordinate or scalar. */
    fun fixed32(value: BigInteger): ByteArray {
        val raw = value.toByteArray()
        return when {
            raw.size == 32 -> raw
            raw.size > 32 -> raw.copyOfRange(raw.size - 32, raw.size)
            else -> ByteArray(32 - raw.size) + raw
        }
    }

    fun rawPoint(key: ECPublicKey): ByteArray = fixed32(key.w.affineX) + fixed32(key.w.affineY)

    /** ECDH on P-256: the 32-byte x-coordinate of the shared point. */
    fun ecdh(privateKey: PrivateKey, publicKey: PublicKey): ByteArray {
        val agreement = KeyAgreement.getInstance("ECDH")
        agreement.init(privateKey)
        agreement.doPhase(publicKey, true)
        return agreement.generateSecret()
    }

    // MARK: RSA

    /** RSAES-OAEP with SHA-256 and MGF1-SHA-256 (the JDK's "OAEPWithSHA-256" alone would use MGF1-SHA-1). */
    val oaepSha256 = OAEPParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, PSource.PSpecified.DEFAULT)
    /** OAEP with SHA-256 and MGF1-SHA-1: what `OAEPWithSHA-256AndMGF1Padding` means on Java; seed-form entries only. */
    val oaepSha256Mgf1Sha1 = OAEPParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA1, PSource.PSpecified.DEFAULT)

    /**
     * The RSA key [n] and [e] name, if a writer may wrap to it (FORMAT.md §4.1): the rules of OpenSSL's public-key
     * check, which the Swift SDK applies (`n` odd, neither a prime nor a prime power, no prime factor below 752; `e`
     * odd and above 1), and the limits of Java's `KeyFactory`, which the Swift SDK applies too (`e` below `n`, of at
     * most 64 bits when `n` has more than 3072). Throws `malformed` for any other key, never a `java.security` error.
     */
    fun rsaPublicKey(n: ByteArray, e: ByteArray, path: String): PublicKey {
        val modulus = BigInteger(1, n)
        val exponent = BigInteger(1, e)
        val exponentFits = exponent > BigInteger.ONE && exponent < modulus && (modulus.bitLength() <= 3072 || exponent.bitLength() <= 64)
        if (!exponent.testBit(0) || !exponentFits) throw VaultException.Malformed("$path is not a usable RSA public key: its exponent")
        if (!modulus.testBit(0) || modulus.gcd(SMALL_ODD_PRIMES) != BigInteger.ONE || modulus.isProbablePrime(64) || isPerfectPower(modulus))
            throw VaultException.Malformed("$path is not a usable RSA public key: its modulus")
        return try {
            KeyFactory.getInstance("RSA").generatePublic(RSAPublicKeySpec(modulus, exponent))
        } catch (error: GeneralSecurityException) {
            throw VaultException.Malformed("$path is not a usable RSA public key")
        }
    }

    /** The primes below 1821: the exponents a perfect power of an RSA modulus of up to 16 384 bits could have. */
    private val PRIMES: List<Int> = primesBelow(16384 / 9 + 1)

    /** The product of the odd primes below 752: OpenSSL refuses a modulus sharing a factor with it. */
    private val SMALL_ODD_PRIMES: BigInteger = PRIMES.filter { it in 3 until 752 }.fold(BigInteger.ONE) { product, p -> product.multiply(BigInteger.valueOf(p.toLong())) }

    /**
     * Whether [n], free of prime factors below 752, is r^k for some k ≥ 2: only prime k need trying, and each prime
     * factor being at least 757 (more than 2^9.5) bounds k by bitLength / 9.
     */
    private fun isPerfectPower(n: BigInteger): Boolean =
        PRIMES.asSequence().takeWhile { it <= n.bitLength() / 9 }.any { k -> integerRoot(n, k).pow(k) == n }

    /** ⌊n^(1/k)⌋ by Newton's iteration from above. */
    private fun integerRoot(n: BigInteger, k: Int): BigInteger {
        val kBig = BigInteger.valueOf(k.toLong())
        var x = BigInteger.ONE.shiftLeft((n.bitLength() + k - 1) / k)
        while (true) {
            val next = x.multiply(kBig.subtract(BigInteger.ONE)).add(n.divide(x.pow(k - 1))).divide(kBig)
            if (next >= x) return x
            x = next
        }
    }

    private fun primesBelow(limit: Int): List<Int> {
        val composite = BooleanArray(maxOf(limit, 2))
        val primes = ArrayList<Int>()
        for (candidate in 2 until limit) {
            if (composite[candidate]) continue
            primes.add(candidate)
            var multiple = candidate.toLong() * candidate
            while (multiple < limit) { composite[multiple.toInt()] = true; multiple += candidate }
        }
        return primes
    }

    /** RSAES-OAEP-256 of [dek]; throws `cryptoFailure` if the provider refuses. */
    fun rsaEncrypt(key: PublicKey, dek: ByteArray): ByteArray = try {
        val cipher = Cipher.getInstance("RSA/ECB/OAEPPadding")
        cipher.init(Cipher.ENCRYPT_MODE, key, oaepSha256)
        cipher.doFinal(dek)
    } catch (error: GeneralSecurityException) {
        throw VaultException.CryptoFailure("RSA-OAEP-256 wrap failed", error)
    }

    /** Unsigned big-endian without leading zero bytes, as JWK writes `n` and `e`. */
    fun unsigned(value: BigInteger): ByteArray {
        val raw = value.toByteArray()
        var start = 0
        while (start < raw.size - 1 && raw[start] == 0.toByte()) start++
        return raw.copyOfRange(start, raw.size)
    }
}
