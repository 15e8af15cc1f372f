// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/security/KeyStoreException (API level 33)
package android.security;

public class KeyStoreException extends Exception {
    KeyStoreException() { throw new RuntimeException("Stub!"); }
    public int getNumericErrorCode() { throw new RuntimeException("Stub!"); }
    public boolean isTransientFailure() { throw new RuntimeException("Stub!"); }
    public boolean isSystemError() { throw new RuntimeException("Stub!"); }
}
