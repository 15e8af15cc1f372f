package com.walletvault

import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import org.bouncycastle.crypto.params.Argon2Parameters

/** Argon2id (RFC 9106), version 0x13, 32-byte tag, no secret or associated data, over BouncyCastle. */
object Argon2id {
    fun derive(password: ByteArray, salt: ByteArray, costs: Argon2Costs): ByteArray {
        val parameters = Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
            .withVersion(Argon2Parameters.ARGON2_VERSION_13)
            .withSalt(salt)
            .withIterations(costs.iterations)
            .withMemoryAsKB(costs.memoryKiB)
            .withParallelism(costs.parallelism)
            .build()
        val generator = Argon2BytesGenerator()
        generator.init(parameters)
        val out = ByteArray(32)
        generator.generateBytes(password, out)
        return out
    }
}
