extension Model {
    /// A readable listing, one block per entity: its columns, then every key that leads
    /// elsewhere, with the ambiguous bare names and what to use instead.
    ///
    /// ```swift
    /// print(context.model.textDescription())
    /// ```
    ///
    /// - Returns: The listing, as `relate inspect` prints it.
    public func textDescription() -> String {
        var lines: [String] = []
        for entity in entities {
            var header = "\(entity.name)  (\(entity.schema).\(entity.table), \(entity.kind.rawValue)"
            header += Self.keyText(of: entity)
            if let parent = entity.parent { header += ", inherits \(parent)" }
            header += ")"
            lines.append(header)
            let width = max(8, entity.attributes.map(\.key.count).max() ?? 0, entity.relationships.map(\.key.count).max() ?? 0)
            for attribute in entity.attributes {
                var line = "  " + attribute.key.padded(to: width) + "  " + attribute.type
                if !attribute.isNullable { line += "  not null" }
                if attribute.isIdentity { line += "  identity" }
                if attribute.isGenerated { line += "  generated" }
                if let value = attribute.defaultValue, !attribute.isGenerated { line += "  default \(value)" }
                if attribute.key != attribute.name { line += "  (column \(attribute.name))" }
                lines.append(line)
            }
            for relationship in entity.relationships {
                let target = entities.first { $0.schema == relationship.to.schema && $0.table == relationship.to.table }?.name
                    ?? relationship.to.table
                var line = "  " + relationship.key.padded(to: width) + "  " + relationship.kind.rawValue.padded(to: 12) + "  → "
                line += "\(target)(\(relationship.to.columns.joined(separator: ", ")))"
                if let via = relationship.via { line += " via \(via.table)" }
                line += "  [\(relationship.rule.rawValue), \(relationship.constraint)"
                if relationship.foreignKeyIn != .via, relationship.isToMany || relationship.foreignKeyIn == .to {
                    line += ", on delete \(relationship.onDelete.rawValue)"
                    if let columns = relationship.onDeleteSetColumns { line += " (\(columns.joined(separator: ", ")))" }
                }
                line += "]"
                let others = ([relationship.name, relationship.qualifiedName] + relationship.aliases)
                    .filter { $0 != relationship.key && (try? entity.relationship(forKey: $0)) == relationship }
                if !others.isEmpty { line += "  also: " + Array(Set(others)).sorted().joined(separator: ", ") }
                lines.append(line)
            }
            for (name, target) in entity.keys.sorted(by: { $0.key < $1.key }) {
                if case .ambiguous(let candidates) = target {
                    lines.append("  " + name.padded(to: width) + "  ambiguous     → use " + candidates.joined(separator: " or "))
                }
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

extension Model {
    /// `, primary key: id`; for a key that is not the primary key, where it comes from
    /// (`, key: code (unique constraint region_code_key)`); `, no key` when there is none.
    static func keyText(of entity: Entity) -> String {
        let columns = entity.primaryKey.joined(separator: ", ")
        switch entity.keySource {
        case nil: return ", no key"
        case .primaryKey: return ", primary key: \(columns)"
        case .uniqueConstraint: return ", key: \(columns) (unique constraint \(entity.keyName ?? "?"))"
        case .uniqueIndex: return ", key: \(columns) (unique index \(entity.keyName ?? "?"))"
        case .override: return ", key: \(columns) (override)"
        case .view: return ", key: \(columns) (view of \(entity.keyName ?? "?"))"
        }
    }
}
