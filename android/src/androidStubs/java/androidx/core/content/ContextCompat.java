// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/core/content/ContextCompat (androidx.core:core)
package androidx.core.content;

public class ContextCompat {
    protected ContextCompat() { throw new RuntimeException("Stub!"); }
    public static java.util.concurrent.Executor getMainExecutor(android.content.Context context) { throw new RuntimeException("Stub!"); }
}
