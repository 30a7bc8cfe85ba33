extension Model {
    /// One line per relationship pair, seen from the side that holds the foreign key (the
    /// helper's first end for many-to-many).
    private var relationshipPairs: [(Relationship, inverse: String)] {
        var seen = Set<String>()
        return relationships.compactMap { relationship in
            switch relationship.foreignKeyIn {
            case .from:
                return (relationship, relationship.inverseKey)
            case .to:
                // A one-to-one's holder side already draws it; so does the many-to-one side.
                return nil
            case .via:
                guard let via = relationship.via else { return nil }
                let ends = [via.fromColumns.joined(separator: ","), via.toColumns.joined(separator: ",")].sorted()
                guard seen.insert("\(via.schema).\(via.table):\(ends)").inserted else { return nil }
                return (relationship, relationship.inverseKey)
            }
        }
    }

    private func entityName(_ end: Relationship.End) -> String {
        entity(schema: end.schema, table: end.table)?.name ?? end.table
    }

    /// A Mermaid `erDiagram`.
    ///
    /// - Returns: The diagram's source, as `relate inspect --format mermaid` prints it.
    public func mermaidDescription() -> String {
        func identifier(_ name: String) -> String {
            String(name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" })
        }
        var lines = ["erDiagram"]
        for entity in entities {
            lines.append("    \(identifier(entity.name)) {")
            for attribute in entity.attributes {
                var line = "        \(identifier(attribute.type.replacingOccurrences(of: "[]", with: "_array"))) \(identifier(attribute.name))"
                if entity.primaryKey.contains(attribute.name) { line += " PK" }
                if entity.relationships.contains(where: { $0.foreignKeyIn == .from && $0.from.columns.contains(attribute.name) }) {
                    line += entity.primaryKey.contains(attribute.name) ? ", FK" : " FK"
                }
                if attribute.name != identifier(attribute.name) { line += " \"\(attribute.name.replacingOccurrences(of: "\"", with: "'"))\"" }
                lines.append(line)
            }
            lines.append("    }")
        }
        for (relationship, inverse) in relationshipPairs {
            let from = identifier(entityName(relationship.from))
            let to = identifier(entityName(relationship.to))
            let label = "\(relationship.key) / \(inverse)".replacingOccurrences(of: "\"", with: "'")
            switch relationship.kind {
            case .manyToOne: lines.append("    \(from) }o--|| \(to) : \"\(label)\"")
            case .oneToOne: lines.append("    \(from) |o--|| \(to) : \"\(label)\"")
            case .manyToMany:
                lines.append("    \(from) }o--o{ \(to) : \"\(label) via \(relationship.via?.table ?? "")\"")
            case .oneToMany: lines.append("    \(from) ||--o{ \(to) : \"\(label)\"")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A Graphviz digraph: `relate inspect --format dot | dot -Tpng -o schema.png`.
    ///
    /// - Returns: The graph's source, for Graphviz's `dot`.
    public func dotDescription() -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func html(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        var lines = [
            "digraph schema {",
            "    rankdir=LR;",
            "    node [shape=plaintext, fontname=\"Helvetica\", fontsize=11];",
            "    edge [fontname=\"Helvetica\", fontsize=9];",
        ]
        for entity in entities {
            var rows = "<TR><TD BGCOLOR=\"#dde6f3\"><B>\(html(entity.name))</B></TD></TR>"
            for attribute in entity.attributes {
                let key = entity.primaryKey.contains(attribute.name) ? " <FONT COLOR=\"#b8860b\">PK</FONT>" : ""
                rows += "<TR><TD ALIGN=\"LEFT\">\(html(attribute.name)) <FONT COLOR=\"#666666\">\(html(attribute.type))</FONT>\(key)</TD></TR>"
            }
            let style = entity.kind == .view || entity.kind == .materializedView ? " STYLE=\"DASHED\"" : ""
            lines.append("    \(quoted(entity.name)) [label=<<TABLE BORDER=\"1\" CELLBORDER=\"0\" CELLSPACING=\"0\"\(style)>\(rows)</TABLE>>];")
        }
        for (relationship, inverse) in relationshipPairs {
            let from = quoted(entityName(relationship.from))
            let to = quoted(entityName(relationship.to))
            switch relationship.kind {
            case .manyToMany:
                let label = quoted("\(relationship.key) / \(inverse)\nvia \(relationship.via?.table ?? "")")
                lines.append("    \(from) -> \(to) [dir=both, style=dashed, arrowhead=crow, arrowtail=crow, label=\(label)];")
            case .oneToOne:
                lines.append("    \(from) -> \(to) [arrowhead=tee, arrowtail=tee, dir=both, label=\(quoted("\(relationship.key) / \(inverse)"))];")
            default:
                lines.append("    \(from) -> \(to) [arrowtail=crow, arrowhead=tee, dir=both, label=\(quoted("\(relationship.key) / \(inverse)"))];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}
