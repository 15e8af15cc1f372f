import Foundation
import VaultCore
import VaultJSON

/// How files map onto the vault's keyed items.
///
/// `push FILE` treats the file as the whole vault: a JSON object whose members are the items, so that
/// `pull --out FILE`, an edit, and `push FILE` round-trip (an item removed from the file is deleted). Only items
/// whose value differs are touched, so an unchanged item never wins a merge it had no part in.
/// `push --item NAME FILE` stores one file as one item: its JSON value, or its text when it is not JSON.
enum VaultFileMapping {
    /// What a push changes.
    struct Change: Equatable {
        /// Items to set, sorted by name.
        var updates: [(id: String, value: JSONValue)] = []
        /// Items to delete, sorted.
        var delete: [String] = []
        /// How many of `set` are new.
        var added = 0

        var isEmpty: Bool { updates.isEmpty && delete.isEmpty }

        static func == (lhs: Change, rhs: Change) -> Bool {
            lhs.updates.map(\.id) == rhs.updates.map(\.id) && lhs.updates.map(\.value) == rhs.updates.map(\.value)
                && lhs.delete == rhs.delete
                && lhs.added == rhs.added
        }

        /// One line for the user.
        var summary: String {
            if isEmpty { return "No item changed." }
            var parts: [String] = []
            if added > 0 { parts.append("\(added) added") }
            if updates.count - added > 0 { parts.append("\(updates.count - added) changed") }
            if !delete.isEmpty { parts.append("\(delete.count) removed (\(delete.joined(separator: ", ")))") }
            return "Items: " + parts.joined(separator: ", ") + "."
        }
    }

    /// The items of a whole-vault file.
    ///
    /// - Throws: `CLIError` `.usage` when the file is not a JSON object.
    static func items(fromVaultFile data: Data, name: String) throws(CLIError) -> [(key: String, value: JSONValue)] {
        let json: JSONValue
        do { json = try JSONParser().parse(data) } catch {
            throw CLIError(.usage, "\(name) is not JSON (\(error.reason)): push a JSON object of items, or use --item NAME")
        }
        guard case .object(let members) = json else {
            throw CLIError(.usage, "\(name) holds a JSON \(json.typeName), not an object of items: use --item NAME to store it as one item")
        }
        return members
    }

    /// One file as one item's value: its JSON, or else its UTF-8 text.
    ///
    /// - Throws: `CLIError` `.usage` for a file that is neither.
    static func itemValue(fromFile data: Data, name: String) throws(CLIError) -> JSONValue {
        if let json = try? JSONParser().parse(data) { return json }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.usage, "\(name) is neither JSON nor UTF-8 text: encode it (e.g. base64) first")
        }
        return .string(text)
    }

    /// What turns `current` (live items) into `wanted`; with `deleteMissing`, items absent from `wanted` are deleted.
    static func change(from current: [String: JSONValue], to wanted: [(key: String, value: JSONValue)], deleteMissing: Bool) -> Change {
        var change = Change()
        for (id, value) in wanted.sorted(by: { $0.key < $1.key }) where current[id] != value {
            change.updates.append((id, value))
            if current[id] == nil { change.added += 1 }
        }
        if deleteMissing {
            let kept = Set(wanted.map(\.key))
            change.delete = current.keys.filter { !kept.contains($0) }.sorted()
        }
        return change
    }

    /// The live items as a pretty JSON object, sorted by name, ending in a newline.
    static func render(_ values: [String: JSONValue]) -> String {
        pretty(.object(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }), indent: "") + "\n"
    }

    /// One item as a file: text as itself, anything else as pretty JSON.
    static func render(item: JSONValue) -> String {
        if case .string(let text) = item { return text }
        return pretty(item, indent: "") + "\n"
    }

    /// JSON with two-space indentation; scalars are spelled by the serializer so escaping matches the vault's.
    static func pretty(_ value: JSONValue, indent: String) -> String {
        let inner = indent + "  "
        switch value {
        case .array(let elements):
            guard !elements.isEmpty else { return "[]" }
            return "[\n" + elements.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members):
            guard !members.isEmpty else { return "{}" }
            return "{\n"
                + members.map { inner + scalar(.string($0.key)) + ": " + pretty($0.value, indent: inner) }
                .joined(separator: ",\n") + "\n\(indent)}"
        default:
            return scalar(value)
        }
    }

    private static func scalar(_ value: JSONValue) -> String {
        String(decoding: JSONSerializer.data(of: value), as: UTF8.self)
    }
}
