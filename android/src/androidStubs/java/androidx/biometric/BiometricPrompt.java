// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/biometric/BiometricPrompt and its nested classes
// (androidx.biometric:biometric 1.1.0): .PromptInfo, .PromptInfo.Builder, .CryptoObject, .AuthenticationCallback,
// .AuthenticationResult. Constants are the reference's values.
package androidx.biometric;

public class BiometricPrompt {
    public BiometricPrompt(androidx.fragment.app.FragmentActivity activity, java.util.concurrent.Executor executor, AuthenticationCallback callback) { throw new RuntimeException("Stub!"); }
    public void authenticate(PromptInfo info, CryptoObject crypto) { throw new RuntimeException("Stub!"); }
    public void authenticate(PromptInfo info) { throw new RuntimeException("Stub!"); }
    public void cancelAuthentication() { throw new RuntimeException("Stub!"); }

    public static final int ERROR_HW_UNAVAILABLE = 1;
    public static final int ERROR_UNABLE_TO_PROCESS = 2;
    public static final int ERROR_TIMEOUT = 3;
    public static final int ERROR_NO_SPACE = 4;
    public static final int ERROR_CANCELED = 5;
    public static final int ERROR_LOCKOUT = 7;
    public static final int ERROR_VENDOR = 8;
    public static final int ERROR_LOCKOUT_PERMANENT = 9;
    public static final int ERROR_USER_CANCELED = 10;
    public static final int ERROR_NO_BIOMETRICS = 11;
    public static final int ERROR_HW_NOT_PRESENT = 12;
    public static final int ERROR_NEGATIVE_BUTTON = 13;
    public static final int ERROR_NO_DEVICE_CREDENTIAL = 14;
    public static final int ERROR_SECURITY_UPDATE_REQUIRED = 15;
    public static final int AUTHENTICATION_RESULT_TYPE_BIOMETRIC = 2;

    public abstract static class AuthenticationCallback {
        public AuthenticationCallback() { throw new RuntimeException("Stub!"); }
        public void onAuthenticationError(int errorCode, CharSequence errString) { throw new RuntimeException("Stub!"); }
        public void onAuthenticationSucceeded(AuthenticationResult result) { throw new RuntimeException("Stub!"); }
        public void onAuthenticationFailed() { throw new RuntimeException("Stub!"); }
    }

    public static class AuthenticationResult {
        AuthenticationResult() { throw new RuntimeException("Stub!"); }
        public CryptoObject getCryptoObject() { throw new RuntimeException("Stub!"); }
        public int getAuthenticationType() { throw new RuntimeException("Stub!"); }
    }

    public static class CryptoObject {
        public CryptoObject(javax.crypto.Cipher cipher) { throw new RuntimeException("Stub!"); }
        public javax.crypto.Cipher getCipher() { throw new RuntimeException("Stub!"); }
    }

    public static class PromptInfo {
        PromptInfo() { throw new RuntimeException("Stub!"); }

        public static class Builder {
            public Builder() { throw new RuntimeException("Stub!"); }
            public Builder setTitle(CharSequence title) { throw new RuntimeException("Stub!"); }
            public Builder setSubtitle(CharSequence subtitle) { throw new RuntimeException("Stub!"); }
            public Builder setNegativeButtonText(CharSequence negativeButtonText) { throw new RuntimeException("Stub!"); }
            public Builder setAllowedAuthenticators(int allowedAuthenticators) { throw new RuntimeException("Stub!"); }
            public Builder setConfirmationRequired(boolean confirmationRequired) { throw new RuntimeException("Stub!"); }
            public PromptInfo build() { throw new RuntimeException("Stub!"); }
        }
    }
}
