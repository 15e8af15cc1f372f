import VaultCore

/// An array or object whose end a reader has not reached yet: what both readers (`JSONTreeBuilder` behind yajl and
/// simdjson, `PortableJSONParser`) keep per open bracket, so the repeated-name rule is the same code in both.
struct JSONOpenContainer {
    /// Below this many members a repeated name is found by comparing against each; hashing costs more.
    static let membersBeforeHashing = 16

    let isObject: Bool
    var elements: [JSONValue] = []
    var members: [(key: String, value: JSONValue)] = []
    /// The names of `members`, filled only once an object is large enough for hashing to beat comparing.
    var names: Set<String> = []
    var pendingName = ""

    /// Whether an earlier member of this object is called `name` (comparing as Swift strings, so canonically
    /// equivalent spellings are one name, as in `JSONValue`'s subscript); remembers `name` once hashing.
    mutating func hasMember(named name: String) -> Bool {
        guard members.count >= Self.membersBeforeHashing else {
            return members.contains { $0.key == name }
        }
        if names.isEmpty { names = Set(members.map(\.key)) }
        return !names.insert(name).inserted
    }
}
