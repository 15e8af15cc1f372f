import VaultCore
@_spi(Engines) import VaultJSON

/// PortableJSONParser, the reader for platforms without yajl, held to JSONParser's yajl engine on every input: the
/// same value or the same error code, at depth 64 and at depth 2 (where nesting meets the other rules sooner), with
/// and without `cipher` decoded while reading. A value read is then written by PortableJSONSerializer and by
/// JSONSerializer (jansson), which must give the same bytes, and the input's first eight bytes, taken as a double,
/// must be written alike too. A crash, a disagreement, a leak report or a sanitizer finding is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPortableJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(UnsafeBufferPointer(start: data, count: size))
    for maxDepth in [64, 2] {
        var yajl = JSONParser(maxDepth: maxDepth)
        yajl.engine = .yajl
        let portable = PortableJSONParser(maxDepth: maxDepth)
        let expected = Result { () throws(JSONParseError) in try yajl.parse(input) }
        let actual = Result { () throws(JSONParseError) in try portable.parse(input) }
        switch (expected, actual) {
        case (.success(let a), .success(let b)):
            precondition(a == b, "yajl and the portable parser read different values")
            let jansson = JSONSerializer.data(of: b)
            precondition(PortableJSONSerializer.data(of: b) == jansson, "the serializers wrote different bytes")
            precondition((try? portable.parse(jansson)) == b, "the written text does not read back as the value")
        case (.failure(let a), .failure(let b)): precondition(a.code == b.code, "yajl and the portable parser refused with different codes")
        default: preconditionFailure("yajl and the portable parser disagree on accepting the text")
        }
        let expectedExtraction = Result { () throws(JSONParseError) in try yajl.parse(input, decodingBase64URLMember: "cipher") }
        let actualExtraction = Result { () throws(JSONParseError) in try portable.parse(input, decodingBase64URLMember: "cipher") }
        switch (expectedExtraction, actualExtraction) {
        case (.success(let a), .success(let b)):
            precondition(a.value == b.value && a.decoded == b.decoded, "extraction differs between yajl and the portable parser")
        case (.failure(let a), .failure(let b)) where a.code == b.code:
            break
        default:
            preconditionFailure("yajl and the portable parser disagree on the text while extracting")
        }
    }
    if size >= 8 {
        let number = Double(bitPattern: UnsafeRawPointer(data).loadUnaligned(as: UInt64.self))
        precondition(
            PortableJSONSerializer.data(of: .number(number)) == JSONSerializer.data(of: .number(number)),
            "the serializers wrote a double differently")
    }
    return 0
}

/// SwiftPM links an executable's entry point as `FuzzPortableJSON_main`; this hands control to libFuzzer's driver.
@_cdecl("FuzzPortableJSON_main")
public func FuzzPortableJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    // Touch the lazily built globals before libFuzzer starts counting allocations per input (see Fuzz/lsan.supp).
    _ = JSONParser.scannerIsAvailable
    _ = JSONSerializer.data(of: .array([.number(0.5), .string("\u{1}")]))
    _ = PortableJSONSerializer.data(of: .array([.number(0.5), .string("\u{1}")]))
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzPortableJSON)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt
