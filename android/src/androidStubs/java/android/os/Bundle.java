// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/os/Bundle (its interfaces Cloneable and Parcelable are left out:
// the library never uses a Bundle as either)
package android.os;

public final class Bundle extends BaseBundle {
    public Bundle() { throw new RuntimeException("Stub!"); }
}
