import Foundation

/// `aead_test_schema_v1.json`.
struct AeadTestGroup: Decodable {
    struct Vector: Decodable {
        let tcId: Int
        let flags: [String]
        let key, iv, aad, msg, ct, tag: HexBytes
        let result: WycheproofResult
    }

    let ivSize, keySize, tagSize: Int
    let tests: [Vector]
}

/// `keywrap_test_schema_v1.json`.
struct KeywrapTestGroup: Decodable {
    struct Vector: Decodable {
        let tcId: Int
        let flags: [String]
        let key, msg, ct: HexBytes
        let result: WycheproofResult
    }

    let keySize: Int
    let tests: [Vector]
}

/// `rsaes_oaep_decrypt_schema_v1.json`.
struct RsaesOaepDecryptTestGroup: Decodable {
    struct Vector: Decodable {
        let tcId: Int
        let flags: [String]
        let msg, ct, label: HexBytes
        let result: WycheproofResult
    }

    let keySize: Int
    let sha, mgf, mgfSha: String
    let privateKeyPem: String
    let tests: [Vector]
}

/// `ecdh_ecpoint_test_schema_v1.json`.
struct EcdhEcpointTestGroup: Decodable {
    struct Vector: Decodable {
        let tcId: Int
        let flags: [String]
        let `public`, `private`, shared: HexBytes
        let result: WycheproofResult
    }

    let curve, encoding: String
    let tests: [Vector]
}

/// `hkdf_test_schema_v1.json`.
struct HkdfTestGroup: Decodable {
    struct Vector: Decodable {
        let tcId: Int
        let flags: [String]
        let ikm, salt, info, okm: HexBytes
        let size: Int
        let result: WycheproofResult
    }

    let keySize: Int
    let tests: [Vector]
}

/// `mac_test_schema_v1.json`.
struct MacTestGroup: Decodable {
    struct Vector: Decodable {
        let tcId: Int
        let flags: [String]
        let key, msg, tag: HexBytes
        let result: WycheproofResult
    }

    let keySize, tagSize: Int
    let tests: [Vector]
}
