// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/security/keystore/KeyProperties
package android.security.keystore;

public abstract class KeyProperties {
    KeyProperties() { throw new RuntimeException("Stub!"); }
    public static final int PURPOSE_ENCRYPT = 1;
    public static final int PURPOSE_DECRYPT = 2;
    /** Added in API level 31. */
    public static final int PURPOSE_AGREE_KEY = 64;
    /** Added in API level 30. */
    public static final int AUTH_DEVICE_CREDENTIAL = 1;
    /** Added in API level 30. */
    public static final int AUTH_BIOMETRIC_STRONG = 2;
    public static final String KEY_ALGORITHM_AES = "AES";
    public static final String KEY_ALGORITHM_EC = "EC";
    public static final String BLOCK_MODE_GCM = "GCM";
    public static final String ENCRYPTION_PADDING_NONE = "NoPadding";
}
