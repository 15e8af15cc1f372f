// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/activity/ComponentActivity (androidx.activity:activity)
package androidx.activity;

public class ComponentActivity extends androidx.core.app.ComponentActivity {
    public ComponentActivity() { throw new RuntimeException("Stub!"); }
}
