import Foundation
import VaultCore
import VaultCrypto
import VaultJOSE
import VaultJSON

/// Fixed keys: the RFC 7515 A.1 HMAC key (so the fixture token reaches a successful HS256 check) and one RSA and one
/// P-256 key generated at start (asymmetric verification paths, key selection by `kid` and algorithm).
private let hmacKeys: JSONWebKeySet = {
    let jwks =
        #"{"keys":[{"kty":"oct","kid":"a1","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"}]}"#
    return try! JSONWebKeySet(json: Data(jwks.utf8), allowSymmetric: true)
}()

private let publicKeys: JSONWebKeySet = {
    let rsa = JWSSigner(keyID: "idp-rs256", key: .rsa(try! RSA.Signing.PrivateKey(keySize: 2048), .rs256))
    let ec = JWSSigner(keyID: "idp-es256", key: .p256(try! P256.Signing.PrivateKey()))
    let json = try! JSONSerialization.data(withJSONObject: ["keys": [rsa.publicJWK!, ec.publicJWK!]])
    return try! JSONWebKeySet(json: json, allowSymmetric: false)
}()

private let rules = JWTClaimsRules(
    issuer: "https://idp.test", audiences: ["wallet-app"],
    allowedAuthorizedParties: ["oem-a", "oem-b"], requiredScope: nil)
private let sessionRules = JWTClaimsRules(
    issuer: "walletvault", audiences: ["wallet-backup"],
    requiredScope: "wallet-backup.ashx")

/// One bearer token, checked as the server checks access and session tokens. The claim rules run on the payload
/// whether or not the signature verified, so the fuzzer need not forge signatures to reach them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let jws = try? CompactJWS(text) else { return 0 }
    _ = jws.keyID
    _ = jws.type
    _ = try? jws.verify(with: publicKeys, allowed: JWSAlgorithm.asymmetric)
    _ = try? jws.verify(with: hmacKeys, allowed: [.hs256])
    if let claims = try? JSONParser(maxDepth: 16).parse(jws.payload) {
        for now: Int64 in [0, 1_300_819_000, 1_800_000_000, Int64.max / 2, Int64.min / 2] {
            _ = try? rules.validate(claims, now: now)
            _ = try? sessionRules.validate(claims, now: now)
        }
    }
    return 0
}

/// SwiftPM links an executable's entry point as `FuzzJWT_main` (it renames `main` so tests can link the module); this
/// hands control to libFuzzer's driver, which parses the usual libFuzzer flags.
@_cdecl("FuzzJWT_main")
public func FuzzJWTMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    // Build the fixed keys before libFuzzer starts counting allocations per input: Swift keeps some of them
    // behind tagged pointers LeakSanitizer cannot follow, so a lazy first use would read as a leak of input 1.
    _ = (hmacKeys, publicKeys, rules, sessionRules)
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzJWT)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt
