#!/bin/sh
# Optional, not part of make test: compiles the library and its tests with a Kotlin 2.x compiler and runs the tests
# on a 2.x standard library, to check the code compiles with both kotlinc 1.3 (build.sh) and today's Kotlin.
# Debian packages only kotlinc 1.3; the Kotlin Jupyter kernel on PyPI ships a 2.x compiler (kotlin-jupyter-kernel
# 0.19.0.944 bundles compiler 2.4.0-dev-6891 and stdlib 2.3.10-RC), so this downloads that wheel (80 MB) with pip.
set -eu
cd "$(dirname "$0")"
J=/usr/share/java
W=build/kotlin2
mkdir -p "$W"
if [ ! -d "$W/wheel" ]; then
  python3 -m pip download --no-deps --disable-pip-version-check -q -d "$W" kotlin-jupyter-kernel==0.19.0.944
  python3 -c "import zipfile,glob; zipfile.ZipFile(glob.glob('$W/*.whl')[0]).extractall('$W/wheel')"
fi
K=$W/wheel/run_kotlin_kernel/jars
STD=$(ls "$K"/kotlin-stdlib-2*.jar)
COMPILER="$K/kotlin-jupyter-kernel-0.19.0-944-all.jar:$STD:$(ls "$K"/kotlin-script-runtime-*.jar):$(ls "$K"/kotlin-reflect-*.jar):$K/annotations-13.0.jar"
kotlinc2() { java -cp "$COMPILER" org.jetbrains.kotlin.cli.jvm.K2JVMCompiler -no-stdlib -no-reflect -jvm-target 1.8 "$@"; }
echo "Kotlin $(unzip -p "$K/kotlin-jupyter-kernel-0.19.0-944-all.jar" META-INF/compiler.version): main" >&2
rm -rf "$W/main" "$W/android" "$W/tests"
LIBS="$J/bcprov.jar:$J/jackson-core.jar:$J/kotlinx-coroutines-core.jar"
kotlinc2 -cp "$STD:$LIBS" -d "$W/main" src/main/kotlin
# The Android source set and the README sample against the stubs build.sh compiled (kotlinc 1.3 builds those).
sh build.sh compile
STUBS=build/android-stubs
echo "Kotlin 2: android and the sample" >&2
kotlinc2 -cp "$W/main:$STD:$STUBS:$LIBS" -d "$W/android" src/android/kotlin src/sample/kotlin
echo "Kotlin 2: tests" >&2
kotlinc2 -Xfriend-paths="$PWD/$W/main" -cp "$PWD/$W/main:$W/android:$STUBS:$STD:$LIBS:$J/junit-jupiter-api.jar:$J/junit-jupiter-params.jar:$J/opentest4j.jar:$J/junit-platform-commons.jar:$J/apiguardian-api.jar" \
  -d "$W/tests" src/test/kotlin
exec java -Xmx512m -jar "$J/junit-platform-console-standalone.jar" --class-path "$W/tests:$W/main:$W/android:$STUBS:$LIBS:$J/atomicfu.jar:$STD:src/test/resources" \
  --scan-class-path "$W/tests" --disable-banner --details=summary --details-theme=ascii
