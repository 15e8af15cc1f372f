import Foundation

/// Comparisons whose time does not depend on where two secrets first differ.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes; the time depends only on the lengths, which are not secret.
    public static func equal(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
