// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/security/keystore/KeyGenParameterSpec
// https://developer.android.com/reference/android/security/keystore/KeyGenParameterSpec.Builder
package android.security.keystore;

public final class KeyGenParameterSpec implements java.security.spec.AlgorithmParameterSpec {
    KeyGenParameterSpec() { throw new RuntimeException("Stub!"); }

    public static final class Builder {
        public Builder(String keystoreAlias, int purposes) { throw new RuntimeException("Stub!"); }
        public Builder setAlgorithmParameterSpec(java.security.spec.AlgorithmParameterSpec spec) { throw new RuntimeException("Stub!"); }
        public Builder setBlockModes(String... blockModes) { throw new RuntimeException("Stub!"); }
        public Builder setEncryptionPaddings(String... paddings) { throw new RuntimeException("Stub!"); }
        public Builder setKeySize(int keySize) { throw new RuntimeException("Stub!"); }
        public Builder setUserAuthenticationRequired(boolean required) { throw new RuntimeException("Stub!"); }
        /** Added in API level 30. */
        public Builder setUserAuthenticationParameters(int timeout, int type) { throw new RuntimeException("Stub!"); }
        /** Deprecated in API level 30. */
        @Deprecated
        public Builder setUserAuthenticationValidityDurationSeconds(int seconds) { throw new RuntimeException("Stub!"); }
        /** Added in API level 24. */
        public Builder setInvalidatedByBiometricEnrollment(boolean invalidateKey) { throw new RuntimeException("Stub!"); }
        /** Added in API level 28. */
        public Builder setIsStrongBoxBacked(boolean isStrongBoxBacked) { throw new RuntimeException("Stub!"); }
        public KeyGenParameterSpec build() { throw new RuntimeException("Stub!"); }
    }
}
