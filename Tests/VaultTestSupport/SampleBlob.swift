import Foundation
import VaultCore

/// A seed-shaped blob with recognisable content.
public func sampleBlob(_ marker: String = "v1", hint: String = "test device", cipherBytes: Int = 32) -> Data {
    var cipher = Data(marker.utf8)
    cipher.append(Data(repeating: 0x5A, count: max(0, cipherBytes - cipher.count)))
    let object: [String: Any] = [
        "v": 1,
        "wrappedDeks": [["kek_id": "device-\(marker)", "dek_cipher": Base64URL.encode(Data(repeating: 7, count: 40))]],
        "cipher": Base64URL.encode(cipher),
        "iv": Base64URL.encode(Data(repeating: 1, count: 12)),
        "tag": Base64URL.encode(Data(repeating: 2, count: 16)),
        "updatedUtc": "2026-08-12T19:00:00Z",
        "hint": hint,
    ]
    return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}
