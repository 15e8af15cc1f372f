// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/content/Context
// Only the members the library uses; bodies throw, as android.jar's do.
package android.content;

public abstract class Context {
    public Context() { throw new RuntimeException("Stub!"); }
    public abstract java.io.File getNoBackupFilesDir();
    public abstract android.content.pm.PackageManager getPackageManager();
    public abstract Context getApplicationContext();
}
