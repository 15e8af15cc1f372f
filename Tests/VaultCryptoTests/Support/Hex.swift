import Foundation

extension Data {
    /// Decodes lowercase or uppercase hex; traps on malformed fixtures so a broken vector file cannot pass silently.
    init(hex: String) {
        precondition(hex.count % 2 == 0, "odd-length hex in fixture")
        var bytes = [UInt8]()
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { preconditionFailure("bad hex in fixture") }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
