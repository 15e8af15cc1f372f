// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/core/app/ComponentActivity (androidx.core:core)
package androidx.core.app;

public class ComponentActivity extends android.app.Activity {
    public ComponentActivity() { throw new RuntimeException("Stub!"); }
}
