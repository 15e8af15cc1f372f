// For Android Studio users only: nothing in this repository runs Gradle (the library is built and tested with
// android/build.sh, Debian's kotlinc and JUnit 5). Untested; versions are the ones the JVM build uses or newer.
plugins {
    kotlin("jvm") version "2.0.21"
    `java-library`
}

group = "com.walletvault"
version = "0.1.0"

repositories { mavenCentral() }

dependencies {
    implementation("org.bouncycastle:bcprov-jdk18on:1.72")
    implementation("com.fasterxml.jackson.core:jackson-core:2.14.1")
    // api: the engine's constructor takes a CoroutineDispatcher. Built here against Debian's 1.0.1.
    api("org.jetbrains.kotlinx:kotlinx-coroutines-core:1.8.1")
    testImplementation("org.junit.jupiter:junit-jupiter:5.9.2")
}

kotlin { jvmToolchain(17) }

tasks.test {
    useJUnitPlatform()
    // The tests read the format vectors from ../Tests/VaultEnvelopeTests/Vectors/format relative to this directory.
    workingDir = projectDir
}
