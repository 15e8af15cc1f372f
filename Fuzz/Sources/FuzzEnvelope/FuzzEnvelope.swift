import Dispatch
import Foundation
import VaultCrypto
import VaultEnvelope

/// The key of the `a256kw` format vector (Tests/VaultEnvelopeTests/Vectors/format/a256kw.key.json), so mutations of
/// that seed reach the unwrap, header-MAC and AES-GCM paths.
private let vectorKey = "8NkzC5J74aKize73amQ2Z4XrLUsGyBAlgQg0Q8-3qyI"

private let keys: [any KeyEncryptionKey] = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wv-fuzz-envelope-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent("a256kw")
    var base64 = vectorKey.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    _ = FileManager.default.createFile(
        atPath: file.path, contents: Data(base64Encoded: base64)!,
        attributes: [.posixPermissions: 0o600])
    return [try! SymmetricKEK(contentsOf: file)]
}()

/// Something the task captures, so the harness can tell when the task's closure has been destroyed.
private final class Sentinel: Sendable {}

/// A blob handed to the task and taken back by the harness, so it is freed on the fuzzer's thread.
private final class Box: @unchecked Sendable {
    var blob: Data?
    init(_ blob: Data) { self.blob = blob }
}

/// Opens the boxed blob to completion from the fuzzer's synchronous callback.
///
/// libFuzzer counts allocations per input and runs LeakSanitizer when an input ends with more mallocs than frees.
/// A task's closure is destroyed on the executor's thread after it signals, so without waiting for that the
/// blob it captured can still be alive when the input ends (a false leak report, seen once in 4.6 million runs).
private func open(_ box: Box, keys: [any KeyEncryptionKey]) {
    let done = DispatchSemaphore(value: 0)
    var sentinel: Sentinel? = Sentinel()
    weak var watch = sentinel
    Task { [sentinel] in
        withExtendedLifetime(sentinel) {}
        if let blob = box.blob {
            _ = try? await VaultOpener(counterStore: InMemoryCounterStore()).open(blob, vaultID: "vectors", keys: keys)
        }
        done.signal()
    }
    sentinel = nil
    done.wait()
    box.blob = nil
    let deadline = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
    while watch != nil && DispatchTime.now().uptimeNanoseconds < deadline { sched_yield() }
}

/// One downloaded blob: the envelope reader, then, when it parses, opening it with the vector's key
/// (a fresh counter store each time, so rollback refusals do not hide later checks).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let blob = Data(bytes: data, count: size)
    // The opener parses again; inputs the reader refuses never reach a task.
    guard (try? VaultEnvelope(parsing: blob)) != nil else { return 0 }
    open(Box(blob), keys: keys)
    return 0
}

/// SwiftPM links an executable's entry point as `FuzzEnvelope_main` (it renames `main` so tests can link the module); this
/// hands control to libFuzzer's driver, which parses the usual libFuzzer flags.
@_cdecl("FuzzEnvelope_main")
public func FuzzEnvelopeMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    // Build the fixed keys before libFuzzer starts counting allocations per input: Swift keeps some of them
    // behind tagged pointers LeakSanitizer cannot follow, so a lazy first use would read as a leak of input 1.
    _ = keys
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzEnvelope)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt
