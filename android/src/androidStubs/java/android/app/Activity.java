// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/app/Activity
package android.app;

public class Activity extends android.view.ContextThemeWrapper {
    public Activity() { throw new RuntimeException("Stub!"); }
    protected void onCreate(android.os.Bundle savedInstanceState) { throw new RuntimeException("Stub!"); }
    protected void onStart() { throw new RuntimeException("Stub!"); }
    protected void onStop() { throw new RuntimeException("Stub!"); }
    protected void onDestroy() { throw new RuntimeException("Stub!"); }
}
