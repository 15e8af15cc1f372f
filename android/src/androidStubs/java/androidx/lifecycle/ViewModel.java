// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/androidx/lifecycle/ViewModel (androidx.lifecycle:lifecycle-viewmodel)
package androidx.lifecycle;

public abstract class ViewModel {
    public ViewModel() { throw new RuntimeException("Stub!"); }
    protected void onCleared() { throw new RuntimeException("Stub!"); }
}
