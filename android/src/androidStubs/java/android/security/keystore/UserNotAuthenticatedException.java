// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/security/keystore/UserNotAuthenticatedException
package android.security.keystore;

public class UserNotAuthenticatedException extends java.security.InvalidKeyException {
    public UserNotAuthenticatedException() { throw new RuntimeException("Stub!"); }
    public UserNotAuthenticatedException(String message) { throw new RuntimeException("Stub!"); }
    public UserNotAuthenticatedException(String message, Throwable cause) { throw new RuntimeException("Stub!"); }
}
