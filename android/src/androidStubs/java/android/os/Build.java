// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/android/os/Build and .../Build.VERSION, .../Build.VERSION_CODES
// MODEL and SDK_INT are run-time values (blank finals, so that nothing inlines them); VERSION_CODES are constants.
package android.os;

public class Build {
    public Build() { throw new RuntimeException("Stub!"); }
    public static final String MODEL;
    static { MODEL = null; }

    public static class VERSION {
        public VERSION() { throw new RuntimeException("Stub!"); }
        public static final int SDK_INT;
        static { SDK_INT = 0; }
    }

    public static class VERSION_CODES {
        public VERSION_CODES() { throw new RuntimeException("Stub!"); }
        public static final int P = 28;
        public static final int Q = 29;
        public static final int R = 30;
        public static final int S = 31;
        public static final int TIRAMISU = 33;
    }
}
