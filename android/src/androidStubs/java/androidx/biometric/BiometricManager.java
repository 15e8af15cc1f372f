// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/biometric/BiometricManager and .../BiometricManager.Authenticators
// (androidx.biometric:biometric 1.1.0)
package androidx.biometric;

public class BiometricManager {
    BiometricManager() { throw new RuntimeException("Stub!"); }
    public static BiometricManager from(android.content.Context context) { throw new RuntimeException("Stub!"); }
    public int canAuthenticate(int authenticators) { throw new RuntimeException("Stub!"); }

    public static final int BIOMETRIC_SUCCESS = 0;
    public static final int BIOMETRIC_ERROR_HW_UNAVAILABLE = 1;
    public static final int BIOMETRIC_ERROR_NONE_ENROLLED = 11;
    public static final int BIOMETRIC_ERROR_NO_HARDWARE = 12;
    public static final int BIOMETRIC_ERROR_SECURITY_UPDATE_REQUIRED = 15;

    public interface Authenticators {
        int BIOMETRIC_STRONG = 15;
        int BIOMETRIC_WEAK = 255;
        int DEVICE_CREDENTIAL = 32768;
    }
}
