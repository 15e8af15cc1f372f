// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/os/BaseBundle
package android.os;

public class BaseBundle {
    BaseBundle() { throw new RuntimeException("Stub!"); }
}
