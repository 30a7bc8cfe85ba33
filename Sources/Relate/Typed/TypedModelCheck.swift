import Foundation
import RelatePostgres

/// Schema drift caught before a value is read: a generated type's ``TypedEntity`` against
/// the live model. Each (model, type) pair is checked once and remembered while the
/// model's layout lives, so that every context of a model (and a `Database`'s) pays once.
enum TypedModelCheck {
    /// Layouts by identity, each with the fingerprints of the types that passed.
    private final class Passed {
        weak var layout: ModelLayout?
        var fingerprints: Set<String> = []

        init(layout: ModelLayout) {
            self.layout = layout
        }
    }

    private static let passed = Locked<[ObjectIdentifier: Passed]>([:])

    static func check(_ typed: TypedEntity, against layout: ModelLayout) throws(RelateError) {
        let id = ObjectIdentifier(layout)
        let known = passed.withLock { table -> Bool in
            guard let entry = table[id], entry.layout === layout else { return false }
            return entry.fingerprints.contains(typed.fingerprint + typed.name)
        }
        if known { return }
        try differences(typed, model: layout.model)
        passed.withLock { table in
            if let entry = table[id], entry.layout === layout {
                entry.fingerprints.insert(typed.fingerprint + typed.name)
            } else {
                // A layout at the address of one gone: its entry is stale. Forget every stale one.
                table = table.filter { $0.value.layout != nil }
                let entry = Passed(layout: layout)
                entry.fingerprints.insert(typed.fingerprint + typed.name)
                table[id] = entry
            }
        }
    }

    /// Throws the first difference between `typed` and `model` that generated code would
    /// trip over: an entity gone, a column dropped, moved, retyped or made nullable, an
    /// enum's label added or removed, a relationship gone or leading elsewhere. A column added at the end, or a NOT NULL
    /// added, is no difference.
    static func differences(_ typed: TypedEntity, model: Model) throws(RelateError) {
        func drift(_ message: String, key: String? = nil) -> RelateError {
            RelateError(
                kind: .schemaChanged, message: message + "; regenerate the typed models (relate generate)", entity: typed.name, key: key)
        }
        let entity: Entity
        do {
            entity = try model.entity(typed.name)
        } catch {
            let nearest = RelateError.nearestNames(to: typed.name, in: model.entities.map(\.name))
            throw drift(
                "table \"\(typed.name)\" of the generated type is not in the model (renamed or dropped?)"
                    + (nearest.isEmpty ? "" : "; did you mean \(nearest.map { "\"\($0)\"" }.joined(separator: " or "))?"))
        }
        let table = "\(entity.schema).\(entity.table)"
        for (index, attribute) in typed.attributes.enumerated() {
            guard let position = entity.attributes.firstIndex(where: { $0.name == attribute.name }) else {
                throw drift("column \"\(attribute.name)\" of table \"\(table)\" was dropped (or renamed)", key: attribute.key)
            }
            let live = entity.attributes[position]
            if live.type != attribute.type {
                throw drift(
                    "column \"\(attribute.name)\" of table \"\(table)\" is now of type \(live.type), generated as \(attribute.type)",
                    key: attribute.key)
            }
            if let generated = attribute.enumLabels, let labels = live.enumLabels {
                // A label the enum lacks would fail a read; one it has that is gone, a write.
                // Labels merely reordered change neither.
                // By bytes, as the server tells labels apart (Swift's `==` takes a composed
                // and a decomposed `é` for one).
                let added = labels.filter { label in !generated.contains { $0.hasSameBytes(as: label) } }
                let removed = generated.filter { label in !labels.contains { $0.hasSameBytes(as: label) } }
                let quoted = { (labels: [String]) in labels.map { "\"\($0)\"" }.joined(separator: ", ") }
                if !added.isEmpty || !removed.isEmpty {
                    let change = !added.isEmpty
                        ? "now has label\(added.count == 1 ? "" : "s") \(quoted(added)), which the generated enum lacks"
                        : "no longer has label\(removed.count == 1 ? "" : "s") \(quoted(removed))"
                    throw drift("the enum type \(live.type) of column \"\(attribute.name)\" of table \"\(table)\" \(change)", key: attribute.key)
                }
            }
            if let generated = attribute.compositeFields, let composite = live.composite {
                // A field added, dropped, retyped or moved changes the record's layout.
                let fields = composite.fields.map { "\($0.name) \($0.type)" }
                if let first = zip(fields + Array(repeating: "", count: max(0, generated.count - fields.count)),
                                   generated + Array(repeating: "", count: max(0, fields.count - generated.count))).first(where: { $0 != $1 }) {
                    let change = first.0.isEmpty ? "no longer has field \(first.1)" : first.1.isEmpty ? "now has field \(first.0)"
                        : "has field \(first.0) where the generated struct has \(first.1)"
                    throw drift("the composite type \(composite.name) of column \"\(attribute.name)\" of table \"\(table)\" \(change)", key: attribute.key)
                }
            }
            if live.isNullable && !attribute.nullable {
                throw drift("column \"\(attribute.name)\" of table \"\(table)\" is now nullable, generated as NOT NULL", key: attribute.key)
            }
            if position != index {
                throw drift(
                    "column \"\(attribute.name)\" of table \"\(table)\" is now at position \(position + 1), generated at \(index + 1) (columns were dropped or re-added)",
                    key: attribute.key)
            }
            if live.key != attribute.key {
                throw drift(
                    "column \"\(attribute.name)\" of table \"\(table)\" now answers to key \"\(live.key)\", generated as \"\(attribute.key)\"",
                    key: attribute.key)
            }
        }
        for relationship in typed.relationships {
            guard let live = entity.relationships.first(where: { $0.key == relationship.key }) else {
                throw drift(
                    "relationship \"\(relationship.key)\" of table \"\(table)\" is not in the model (its foreign key was dropped, or its name is now ambiguous)",
                    key: relationship.key)
            }
            let target = model.entity(schema: live.to.schema, table: live.to.table)?.name ?? "\(live.to.schema).\(live.to.table)"
            let via = live.via.map { model.entity(schema: $0.schema, table: $0.table)?.name ?? "\($0.schema).\($0.table)" }
            if live.kind.rawValue != relationship.kind || target != relationship.target || live.from.columns != relationship.columns
                || live.to.columns != relationship.targetColumns || via != relationship.via
            {
                func describe(_ kind: String, _ target: String, _ columns: [String], _ targetColumns: [String], _ via: String?) -> String {
                    "\(kind) to \"\(target)\" on (\(columns.joined(separator: ", "))) -> (\(targetColumns.joined(separator: ", ")))"
                        + (via.map { " via \"\($0)\"" } ?? "")
                }
                throw drift(
                    "relationship \"\(relationship.key)\" of table \"\(table)\" is now "
                        + describe(live.kind.rawValue, target, live.from.columns, live.to.columns, via) + ", generated as "
                        + describe(relationship.kind, relationship.target, relationship.columns, relationship.targetColumns, relationship.via),
                    key: relationship.key)
            }
        }
    }
}
