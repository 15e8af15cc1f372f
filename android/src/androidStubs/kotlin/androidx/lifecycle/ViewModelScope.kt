// Compile-only stub (never shipped): transcribed from the Android API reference,
// https://developer.android.com/reference/kotlin/androidx/lifecycle/package-summary#(androidx.lifecycle.ViewModel).viewModelScope()
// (androidx.lifecycle:lifecycle-viewmodel-ktx; a Kotlin extension, so this stub is Kotlin)
@file:JvmName("ViewModelKt")
package androidx.lifecycle

import kotlinx.coroutines.CoroutineScope

/** The scope of this ViewModel, cancelled when it is cleared. */
val ViewModel.viewModelScope: CoroutineScope
    get() = throw RuntimeException("Stub!")
