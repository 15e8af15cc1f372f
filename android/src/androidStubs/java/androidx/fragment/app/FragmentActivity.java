// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/fragment/app/FragmentActivity (androidx.fragment:fragment)
package androidx.fragment.app;

public class FragmentActivity extends androidx.activity.ComponentActivity {
    public FragmentActivity() { throw new RuntimeException("Stub!"); }
}
