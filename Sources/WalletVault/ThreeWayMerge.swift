import VaultCore

/// Merges two descendants of a common vault document item by item.
///
/// An item changed on one side only takes that side's version; an item changed identically on
/// both sides is no conflict; an item changed differently on both sides is a conflict, left for
/// the app (or the caller's policy) to decide.
public enum ThreeWayMerge {
    /// The merged document and the items both sides changed differently.
    public struct Result: Sendable, Equatable {
        /// The merge, with conflicting items resolved by `conflictWinner`.
        public let merged: VaultDocument
        /// Identifiers of items both sides changed differently, sorted.
        public let conflicts: [String]

        /// Creates a result.
        public init(merged: VaultDocument, conflicts: [String]) {
            self.merged = merged
            self.conflicts = conflicts
        }
    }

    /// Which version a conflicting item takes in `Result.merged`.
    public enum ConflictWinner: Sendable {
        /// This device's version.
        case local
        /// The server's version.
        case remote
        /// The version changed last (ties go to the server's, which every device sees alike).
        case newest
    }

    /// Merges `local` and `remote`, both descended from `base`.
    public static func merge(
        base: VaultDocument, local: VaultDocument, remote: VaultDocument,
        conflictWinner: ConflictWinner = .newest
    ) -> Result {
        var merged = VaultDocument()
        var conflicts: [String] = []
        let identifiers = Set(base.items.keys).union(local.items.keys).union(remote.items.keys)
        for id in identifiers {
            let (ancestor, mine, theirs) = (base.items[id], local.items[id], remote.items[id])
            let chosen: VaultDocument.Item?
            if mine == theirs || theirs == ancestor {
                chosen = mine
            } else if mine == ancestor {
                chosen = theirs
            } else if mine?.value == theirs?.value {
                // Same content reached separately: no conflict, keep the later stamp.
                chosen = [mine, theirs].compactMap { $0 }.max { $0.modifiedAt < $1.modifiedAt }
            } else {
                conflicts.append(id)
                chosen = winner(mine, theirs, conflictWinner)
            }
            merged.items[id] = chosen
        }
        return Result(merged: merged, conflicts: conflicts.sorted())
    }

    private static func winner(
        _ mine: VaultDocument.Item?, _ theirs: VaultDocument.Item?,
        _ rule: ConflictWinner
    ) -> VaultDocument.Item? {
        switch rule {
        case .local: return mine
        case .remote: return theirs
        case .newest:
            guard let mine else { return theirs }
            guard let theirs else { return mine }
            return mine.modifiedAt > theirs.modifiedAt ? mine : theirs
        }
    }
}
