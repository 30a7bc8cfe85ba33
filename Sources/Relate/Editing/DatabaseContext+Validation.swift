import Foundation
import RelatePostgres

/// What a context that does not autocommit checks before it sends anything: what the
/// catalog says a column takes, and what memory says a to-one leads to.
extension DatabaseContext {
    /// Checks every pending change against what the schema says, without a statement:
    /// NOT NULL columns (a domain's `NOT NULL` too; a new row's column left out needs a
    /// default), `varchar(n)` and `char(n)` lengths, `numeric(p, s)` precision, enum labels,
    /// and to-ones that lead to an object deleted in memory. A label the model does not know
    /// is asked of the server (one statement), which may have had it added since the model
    /// was read (`ALTER TYPE … ADD VALUE`).
    ///
    /// ```swift
    /// do {
    ///     try context.validateChanges()
    /// } catch let error as RelateError where error.kind == .validationFailed {
    ///     print(error.message)   // 2 problems: person.surname is NOT NULL; email.address is longer than varchar(40)
    /// }
    /// ```
    ///
    /// What only the server can judge (a `CHECK`, a unique index, a trigger) comes back from
    /// ``save()`` as the server's error.
    ///
    /// - Throws: One ``RelateError`` of kind ``RelateError/Kind-swift.struct/validationFailed``
    ///   whose message names every problem (entity, key, reason; never a value) and whose
    ///   ``RelateError/candidates`` are the `entity.key` of each; ``RelateError/detail`` names
    ///   the objects.
    public func validateChanges() throws {
        try validate(pendingSummary())
    }

    /// ``validateChanges()`` of the changes `summary` sums up (`save()` sums them up once).
    func validate(_ summary: PendingSummary) throws {
        var problems: [(where: String, reason: String, object: DatabaseObject)] = []
        var seen = Set<String>()
        func problem(_ object: DatabaseObject, _ key: String, _ reason: String) {
            guard seen.insert("\(ObjectIdentifier(object).hashValue).\(key)").inserted else { return }
            problems.append(("\(object.entity.name).\(key)", reason, object))
        }
        // Labels the model does not know, which the server may have (added since the model
        // was read): asked of it below, one statement for all.
        var unknownLabels: [(object: DatabaseObject, attribute: Attribute, labels: [String])] = []
        func check(_ object: DatabaseObject, _ index: Int) {
            let layout = object.table.layout
            // Most cells: NULL where NULL is allowed, or a value no rule of the column limits.
            if object.values[index].isNull ? layout.isNullable[index] : !layout.checksValue[index] { return }
            let attribute = object.entity.attributes[index]
            // Labels by bytes, as the server tells them apart (a composed and a decomposed
            // `é` are one `String` to Swift's `==`).
            if let labels = attribute.enumLabels, case let unknown = Self.labels(of: object.values[index]).filter({ label in !labels.contains { $0.hasSameBytes(as: label) } }),
                !unknown.isEmpty
            {
                unknownLabels.append((object, attribute, unknown))
                return
            }
            if let reason = Self.problem(with: object.values[index], for: attribute) { problem(object, attribute.key, reason) }
        }
        for object in summary.inserted {
            let given = Set(summary.givenColumns[ObjectIdentifier(object)] ?? [])
            for (index, attribute) in object.entity.attributes.enumerated() {
                if given.contains(index) {
                    if attribute.isGenerated { problem(object, attribute.key, "is a generated column, which is never written") }
                    check(object, index)
                } else if !attribute.isNullable, !attribute.hasDefault {
                    problem(object, attribute.key, "is NOT NULL and has neither a value nor a default")
                }
            }
        }
        for (object, originals) in summary.updates where !object.isDeleted {
            for (column, _) in originals { check(object, column) }
        }
        // To-ones that lead to an object deleted in memory: the changed objects' own, and
        // those of every dependant the delete rules left pointing at a deleted row.
        func checkToOnes(_ object: DatabaseObject) {
            for (index, columns) in object.table.foreignKeys {
                if let target = toOneInMemory(object, index, columns), target.isDeleted {
                    problem(object, object.entity.relationships[index].key, "leads to a \(target.entity.name) deleted in memory")
                }
            }
        }
        for object in summary.inserted { checkToOnes(object) }
        for (object, _) in summary.updates where !object.isDeleted { checkToOnes(object) }
        let inserted = summary.deleted.isEmpty ? [] : Set(summary.inserted.map(ObjectIdentifier.init))
        for deleted in summary.deleted {
            // Under SET DEFAULT the database gives them their defaults, and where the action
            // varies (or the key is a child table's copy, not enforced) it decides: they are
            // read after the save.
            for (index, relationship) in deleted.entity.relationships.enumerated()
            where relationship.foreignKeyIn == .to && relationship.onDelete != .setDefault && !relationship.onDeleteVaries {
                let inverse = graph.inverse(of: deleted.entityIndex, index)
                let values = deleted.table.fromColumns[index].map { deleted.values[$0] }
                for dependant in graph.registeredObjects(entity: inverse.entity, indexes: graph.targetColumns(of: deleted.entityIndex, index), values: values)
                where !dependant.isDeleted {
                    // A new row refers to the new row that took the deleted one's key (the
                    // save inserts it after the delete); a row the database holds still
                    // refers to the deleted one when the delete is sent, which a key checked
                    // at COMMIT lets it.
                    if inserted.contains(ObjectIdentifier(dependant)) || relationship.isInitiallyDeferred,
                        let target = toOneInMemory(dependant, inverse.relationship, dependant.table.fromColumns[inverse.relationship]),
                        !target.isDeleted
                    {
                        continue
                    }
                    problem(
                        dependant, dependant.entity.relationships[inverse.relationship].key,
                        "leads to a \(deleted.entity.name) deleted in memory (ON DELETE \(relationship.onDelete))")
                }
            }
        }
        if !unknownLabels.isEmpty {
            let serverLabels = labelsOnServer(of: Set(unknownLabels.map(\.attribute.typeOID)))
            for (object, attribute, unknown) in unknownLabels {
                let labels = serverLabels[attribute.typeOID] ?? attribute.enumLabels ?? []
                if unknown.contains(where: { label in !labels.contains { $0.hasSameBytes(as: label) } }) {
                    problem(object, attribute.key, "is not a label of enum \(attribute.type) (\(labels.joined(separator: ", ")))")
                }
            }
        }
        guard !problems.isEmpty else { return }
        throw RelateError(
            kind: .validationFailed,
            message: (problems.count == 1 ? "1 problem: " : "\(problems.count) problems: ")
                + problems.map { "\($0.where) \($0.reason)" }.joined(separator: "; "),
            entity: problems.count == 1 ? problems[0].object.entity.name : nil,
            key: problems.count == 1 ? problems[0].where.split(separator: ".").last.map(String.init) : nil,
            candidates: problems.map(\.where), detail: problems.map { "\($0.object)" }.joined(separator: ", "))
    }

    /// The object a to-one leads to, when memory holds it.
    private func toOneInMemory(_ object: DatabaseObject, _ index: Int, _ columns: [Int]) -> DatabaseObject? {
        let values = columns.map { object.values[$0] }
        guard !values.contains(where: \.isNull) else { return nil }
        return graph.registered(
            entity: graph.target(of: object.entityIndex, index), indexes: graph.targetColumns(of: object.entityIndex, index), values: values)
    }

    /// The labels an enum column's (or an enum array's) `value` holds.
    static func labels(of value: StoredValue) -> [String] {
        switch value {
        case .string(let label): [label]
        case .other(let box): (box.value as? [String?])?.compactMap { $0 } ?? []
        default: []
        }
    }

    /// The labels the server has for the enum types of columns whose type OIDs are `types`
    /// (an enum array's: its element's), by OID, in one statement: by OID, as a type's
    /// name may be off the session's search path. A failed read leaves them out (the
    /// model's labels then judge).
    private func labelsOnServer(of types: Set<UInt32>) -> [UInt32: [String]] {
        let statement = Statement(
            sql: """
                SELECT t.oid::int8, array(SELECT e.enumlabel::text FROM pg_enum e
                                           WHERE e.enumtypid = CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem ELSE t.oid END
                                           ORDER BY e.enumsortorder)
                FROM pg_type t WHERE t.oid = ANY($1::int8[]::oid[])
                """,
            parameters: [types.map(Int.init)])
        guard let result = try? send(statement, entity: nil) else { return [:] }
        var labels: [UInt32: [String]] = [:]
        for row in 0..<result.count {
            if let oid = try? result[row].decode(Int.self, at: 0), let found = try? result[row].decode([String].self, at: 1), !found.isEmpty {
                labels[UInt32(truncatingIfNeeded: oid)] = found
            }
        }
        return labels
    }

    /// Why `value` does not fit `attribute`'s column, in words without the value; `nil` when
    /// it fits. ``EntityLayout/checksValue`` says which attributes limit a value other than
    /// NULL. An enum's labels are judged by ``validate(_:)``, which asks the server of one
    /// the model does not know.
    static func problem(with value: StoredValue, for attribute: Attribute) -> String? {
        if value.isNull { return attribute.isNullable ? nil : "is NOT NULL" }
        if value.isPendingKey { return nil }
        guard let modifier = attribute.typeModifier, modifier >= 4 else { return nil }
        switch PostgresType(attribute.typeOID) {
        case .varchar, .bpchar:
            // The server counts characters as code points, and stores a longer value whose
            // characters past the length are all spaces, cut to the length.
            let length = Int(modifier) - 4
            if case .string(let text) = value, text.unicodeScalars.count > length,
                text.unicodeScalars.dropFirst(length).contains(where: { $0 != " " })
            {
                return "is longer than \(attribute.type)(\(length)) allows"
            }
        case .numeric:
            let precision = Int((modifier - 4) >> 16) & 0xFFFF
            // The scale's 11 bits are signed (PostgreSQL 15 allows a negative scale).
            var scale = Int(modifier - 4) & 0x7FF
            if scale > 1023 { scale -= 2048 }
            if case .decimal(let number) = value, !number.isNaN, number != 0 {
                var rounded = Decimal()
                var given = number
                NSDecimalRound(&rounded, &given, scale, .plain)
                var limit = Decimal(1)
                for _ in 0..<max(precision - scale, 0) { limit *= 10 }
                if precision - scale < 0 { limit = 1 / pow(Decimal(10), scale - precision) }
                if abs(rounded) >= limit {
                    return "does not fit numeric(\(precision), \(scale)): at most \(precision - scale) digits before the point"
                }
            }
        default:
            break
        }
        return nil
    }
}
