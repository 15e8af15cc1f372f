package com.walletvault

/**
 * This device's key as a software P-256 key (`ECDH-ES+A256KW`, like a Swift key file), its scalar kept in [store]
 * sealed under the store's at-rest key: for the JVM (command-line tools, servers, tests), where no Keystore exists.
 * Not for phones: nothing asks the user before the key is used.
 */
public class SoftwareDeviceKeys(private val store: LocalVaultStore) : DeviceKeyStore {
    private companion object {
        const val FILE = "software-device-key"
    }

    override fun current(): KeyEncryptionKey? {
        val obj = store.read(FILE)?.let { Json.parse(it) as? JsonValue.Obj } ?: return null
        fun bytes(name: String) = obj[name]?.string?.let { Base64Url.decode(it) }
            ?: throw SyncException(SyncException.Code.LOCAL_STORAGE, "$FILE cannot be read back")
        return DeviceKek.fromRaw(bytes("d"), bytes("x"), bytes("y"))
    }

    override fun storageLevel(): KeyStorageLevel? = if (store.read(FILE) != null) KeyStorageLevel.SOFTWARE else null

    /** A new P-256 key replacing the previous one. */
    override suspend fun create(): KeyEncryptionKey {
        val key = DeviceKek.generate()
        store.write(FILE, Json.write(Json.obj("d" to Json.str(Base64Url.encode(key.privateScalar())),
            "x" to Json.str(Base64Url.encode(key.publicKey.x)), "y" to Json.str(Base64Url.encode(key.publicKey.y)))))
        return key
    }
}
