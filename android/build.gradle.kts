// The library as an Android library module, for Android Studio users. Nothing in this repository runs Gradle (no
// Android SDK can be installed here): android/build.sh builds and tests the same sources with Debian's kotlinc and
// JUnit 5, the Android source set against compile-only stubs. Untested; versions are the ones named in README.md.
plugins {
    id("com.android.library") version "8.7.3"
    kotlin("android") version "2.0.21"
}

android {
    namespace = "com.walletvault"
    compileSdk = 35
    defaultConfig {
        // 28: StrongBox (FEATURE_STRONGBOX_KEYSTORE) and the system BiometricPrompt exist from Android 9; the Keystore
        // of Android 6-8 loses keys on some devices ("Invalid key blob"). See README.md, "minSdk".
        minSdk = 28
    }
    sourceSets {
        getByName("main") { java.srcDirs("src/main/kotlin", "src/android/kotlin") }
        getByName("test") {
            java.srcDirs("src/test/kotlin")
            resources.srcDirs("src/test/resources")
        }
    }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_1_8
        targetCompatibility = JavaVersion.VERSION_1_8
    }
    testOptions {
        unitTests.all {
            it.useJUnitPlatform()
            // The tests read the format vectors from ../Tests/VaultEnvelopeTests/Vectors/format.
            it.workingDir = projectDir
        }
    }
}

kotlin {
    // The new Android files declare `public` explicitly; the older ones do not all yet, hence a warning, not an error.
    explicitApiWarning()
}

dependencies {
    implementation("org.bouncycastle:bcprov-jdk18on:1.72")                    // Argon2id, RFC 3394
    implementation("com.fasterxml.jackson.core:jackson-core:2.14.1")          // strict JSON (repeated names refused)
    implementation("androidx.biometric:biometric:1.1.0")                      // BiometricPrompt, BIOMETRIC_STRONG
    implementation("androidx.fragment:fragment:1.5.7")                        // FragmentActivity, the prompt's host
    implementation("androidx.core:core:1.9.0")                                // ContextCompat.getMainExecutor
    implementation("org.jetbrains.kotlinx:kotlinx-coroutines-android:1.7.3") // Dispatchers.Main for the prompt
    // api: the engine's constructor takes a CoroutineDispatcher. Built here against Debian's 1.0.1.
    api("org.jetbrains.kotlinx:kotlinx-coroutines-core:1.8.1")
    testImplementation("org.junit.jupiter:junit-jupiter:5.9.2")
}
