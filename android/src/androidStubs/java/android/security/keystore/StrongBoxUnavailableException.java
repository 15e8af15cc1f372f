// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/security/keystore/StrongBoxUnavailableException (API level 28)
package android.security.keystore;

public class StrongBoxUnavailableException extends java.security.ProviderException {
    public StrongBoxUnavailableException() { throw new RuntimeException("Stub!"); }
    public StrongBoxUnavailableException(String message) { throw new RuntimeException("Stub!"); }
    public StrongBoxUnavailableException(String message, Throwable cause) { throw new RuntimeException("Stub!"); }
}
