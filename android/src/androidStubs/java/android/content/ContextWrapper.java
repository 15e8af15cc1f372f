// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/content/ContextWrapper
package android.content;

public class ContextWrapper extends Context {
    public ContextWrapper(Context base) { throw new RuntimeException("Stub!"); }
    public java.io.File getNoBackupFilesDir() { throw new RuntimeException("Stub!"); }
    public android.content.pm.PackageManager getPackageManager() { throw new RuntimeException("Stub!"); }
    public Context getApplicationContext() { throw new RuntimeException("Stub!"); }
}
