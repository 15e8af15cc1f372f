import VaultCore
@_spi(Engines) import VaultJSON

/// One save body: parse it as the server does (simdjson, yajl for what it refuses, duplicates refused, depth 64),
/// then check the vault shape. yajl alone must give the same answer, with and without `cipher` decoded while parsing
/// (which may cut a last `cipher` out of the text unscanned), and decoding it while parsing must agree with decoding
/// it afterwards. Every outcome is an answer or a thrown error; a crash, a disagreement, a leak
/// report or a sanitizer finding is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzShape(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let input = UnsafeRawBufferPointer(bytes)
    let parser = JSONParser(maxDepth: 64)
    var yajl = parser
    yajl.engine = .yajl
    let fast = Result { () throws(JSONParseError) in try parser.parse(input) }
    let slow = Result { () throws(JSONParseError) in try yajl.parse(input) }
    switch (fast, slow) {
    case (.success(let a), .success(let b)): precondition(a == b, "simdjson and yajl read different values")
    case (.failure(let a), .failure(let b)): precondition(a == b, "simdjson and yajl refused differently")
    default: preconditionFailure("simdjson and yajl disagree on accepting the text")
    }
    // Decoding `cipher` while parsing may cut a last `cipher` string out unread (simdjson engine only); yajl reads
    // every byte, so the two must agree on each text.
    let fastExtraction = Result { () throws(JSONParseError) in try parser.parse(input, decodingBase64URLMember: "cipher") }
    let slowExtraction = Result { () throws(JSONParseError) in try yajl.parse(input, decodingBase64URLMember: "cipher") }
    switch (fastExtraction, slowExtraction) {
    case (.success(let a), .success(let b)):
        precondition(a.value == b.value && a.decoded == b.decoded, "extraction differs between the engines")
    case (.failure(let a), .failure(let b)): precondition(a == b, "extraction refused differently")
    default: preconditionFailure("the engines disagree on accepting the text while extracting")
    }
    guard case .success(let value) = fast else { return 0 }
    if let extracted = try? parser.parse(input, decodingBase64URLMember: "cipher") {
        let kept = value["cipher"]?.stringValue.map { Base64URL.decode($0).map(DecodedBase64URLMember.decoded) ?? .notBase64URL }
        precondition(extracted.decoded == kept, "cipher decoded while parsing differs from cipher decoded after")
    }
    if let header = try? VaultShapeValidator().validate(value) {
        // A blob the server would store: its header must describe it consistently.
        precondition(!header.kekIDs.isEmpty && header.kekIDs.count <= 64, "accepted blob with bad wrappedDeks count")
        precondition(header.hint.map { $0.count <= 256 } ?? true, "accepted blob with an over-long hint")
    }
    return 0
}

/// SwiftPM links an executable's entry point as `FuzzShape_main` (it renames `main` so tests can link the module); this
/// hands control to libFuzzer's driver, which parses the usual libFuzzer flags.
@_cdecl("FuzzShape_main")
public func FuzzShapeMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    // Build the fixed keys before libFuzzer starts counting allocations per input: Swift keeps some of them
    // behind tagged pointers LeakSanitizer cannot follow, so a lazy first use would read as a leak of input 1.
    _ = VaultShapeValidator()
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzShape)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt
