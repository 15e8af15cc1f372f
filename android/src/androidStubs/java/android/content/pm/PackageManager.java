// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/content/pm/PackageManager
package android.content.pm;

public abstract class PackageManager {
    public PackageManager() { throw new RuntimeException("Stub!"); }
    public abstract boolean hasSystemFeature(String featureName);
    /** Added in API level 28. */
    public static final String FEATURE_STRONGBOX_KEYSTORE = "android.hardware.strongbox_keystore";
}
