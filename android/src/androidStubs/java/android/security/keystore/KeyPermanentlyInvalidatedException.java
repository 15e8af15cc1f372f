// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/security/keystore/KeyPermanentlyInvalidatedException
package android.security.keystore;

public class KeyPermanentlyInvalidatedException extends java.security.InvalidKeyException {
    public KeyPermanentlyInvalidatedException() { throw new RuntimeException("Stub!"); }
    public KeyPermanentlyInvalidatedException(String message) { throw new RuntimeException("Stub!"); }
    public KeyPermanentlyInvalidatedException(String message, Throwable cause) { throw new RuntimeException("Stub!"); }
}
