#!/bin/sh
# Builds the WalletVault Kotlin library and runs its JUnit 5 tests with Debian's packages only:
# kotlin (kotlinc), junit5, libbcprov-java, libjackson2-core-java, libkotlinx-coroutines-java (1.0.1; an app brings its
# own 1.x, so the library uses only API that 1.0.1 and today's 1.x both have) with libkotlinx-atomicfu-java (Debian's
# coroutines jar calls AtomicFU at run time), installed by `make deps` / `make test`.
# No Gradle runs here. Usage: android/build.sh [test|compile|bench]   (default: test)
set -eu
cd "$(dirname "$0")"
J=/usr/share/java
LIBS="$J/bcprov.jar:$J/jackson-core.jar:$J/kotlinx-coroutines-core.jar"
STDLIB="$J/kotlin-stdlib.jar"
OUT=build
mode=${1:-test}
mkdir -p "$OUT"

# Recompile only when a source is newer than the jar.
newer() { [ ! -f "$1" ] || [ -n "$(find "$2" -newer "$1" -name '*.kt' | head -n 1)" ]; }

if newer "$OUT/walletvault.jar" src/main/kotlin; then
  echo "kotlinc: main" >&2
  kotlinc -jvm-target 1.8 -nowarn -module-name walletvault -cp "$LIBS" -d "$OUT/main" src/main/kotlin && jar cf "$OUT/walletvault.jar" -C "$OUT/main" .
fi

# The Android source set (src/android/kotlin) and the README's sample (src/sample/kotlin), compiled against the
# compile-only stubs of the Android and androidx classes they use (src/androidStubs, transcribed from the Android API
# reference; never shipped). kotlinx-coroutines is Debian's libkotlinx-coroutines-java; an app brings its own 1.x.
COROUTINES="$J/kotlinx-coroutines-core.jar"
STUBS="$OUT/android-stubs"
if [ ! -d "$STUBS" ] || [ -n "$(find src/androidStubs -newer "$STUBS" -type f | head -n 1)" ]; then
  echo "javac, kotlinc: Android stubs" >&2
  rm -rf "$STUBS" && mkdir -p "$STUBS"
  javac -nowarn -d "$STUBS" $(find src/androidStubs/java -name '*.java')
  kotlinc -jvm-target 1.8 -nowarn -cp "$STUBS:$COROUTINES" -d "$STUBS" src/androidStubs/kotlin
  touch "$STUBS"
fi
if newer "$OUT/android.jar" src/android/kotlin || newer "$OUT/android.jar" src/sample/kotlin || [ "$OUT/walletvault.jar" -nt "$OUT/android.jar" ] || [ "$STUBS" -nt "$OUT/android.jar" ]; then
  echo "kotlinc: android (against the stubs) and the README sample" >&2
  rm -rf "$OUT/android"
  kotlinc -jvm-target 1.8 -nowarn -module-name walletvault-android -cp "$OUT/main:$STUBS:$COROUTINES:$LIBS" -d "$OUT/android" src/android/kotlin src/sample/kotlin \
    && jar cf "$OUT/android.jar" -C "$OUT/android" .
fi
[ "$mode" = compile ] && exit 0

TESTCP="$PWD/$OUT/main:$OUT/android:$STUBS:$LIBS:$J/junit-jupiter-api.jar:$J/junit-jupiter-params.jar:$J/opentest4j.jar:$J/junit-platform-commons.jar:$J/apiguardian-api.jar"
if newer "$OUT/tests.jar" src/test/kotlin || [ "$OUT/walletvault.jar" -nt "$OUT/tests.jar" ] || [ "$OUT/android.jar" -nt "$OUT/tests.jar" ]; then
  echo "kotlinc: tests" >&2
  # -Xfriend-paths: the tests see the library's internal declarations (Crypto, Json, Base64Url, ...), as Gradle's do.
  kotlinc -jvm-target 1.8 -nowarn -Xfriend-paths="$PWD/$OUT/main" -cp "$TESTCP" -d "$OUT/tests.jar" src/test/kotlin
fi
# The stubs are on the test class path only for AndroidConstantsTest, which reads their constants; no test calls them.
RUNCP="$OUT/tests.jar:$OUT/walletvault.jar:$OUT/android.jar:$STUBS:$LIBS:$J/atomicfu.jar:$STDLIB:src/test/resources"

case "$mode" in
  test)
    # The end-to-end test needs the Swift binaries; it skips itself (and says so) when they are absent
    # unless WALLETVAULT_E2E_REQUIRED=1.
    junit() {
      java -Xmx512m "$@" -jar "$J/junit-platform-console-standalone.jar" --class-path "$RUNCP" \
        --disable-banner --details=${JUNIT_DETAILS:-summary} --details-theme=ascii \
        ${JUNIT_ARGS:---scan-class-path "$OUT/tests.jar"}
    }
    junit
    # Issue 27: the whole suite again under default locales whose numbers are not ASCII digits (Arabic-Indic,
    # Extended Arabic-Indic, Devanagari), where a format without Locale.ROOT writes a timestamp no reader accepts.
    # WALLETVAULT_LOCALES= (empty) skips these runs, for a quick local loop.
    for tag in ${WALLETVAULT_LOCALES-ar-EG fa-IR ar-SA hi-IN-u-nu-deva}; do
      language=${tag%%-*}; rest=${tag#*-}; country=${rest%%-*}; extensions=
      case "$rest" in *-u-*) extensions=u-${rest#*-u-} ;; esac
      echo "default locale $tag" >&2
      junit -Duser.language="$language" -Duser.country="$country" -Duser.extensions="$extensions"
    done
    ;;
  bench)
    exec java -Xmx512m -cp "$RUNCP" com.walletvault.BenchKt "$@"
    ;;
esac
