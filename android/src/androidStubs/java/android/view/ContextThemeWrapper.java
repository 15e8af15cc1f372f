// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/view/ContextThemeWrapper
package android.view;

public class ContextThemeWrapper extends android.content.ContextWrapper {
    public ContextThemeWrapper() { super(null); throw new RuntimeException("Stub!"); }
}
