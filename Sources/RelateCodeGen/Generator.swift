/// Swift source for a model: one file per entity and one for the model, as plain text.
/// The same input gives the same bytes (sorted, no dates, no paths), whether `relate
/// generate` read the database or the `RelateGenerator` plugin read `relate-model.json`.
///
/// ```swift
/// let files = try Generator(ModelSnapshot(json: data)).files()
/// for file in files { try file.contents.write(to: directory.appending(path: file.name), atomically: true, encoding: .utf8) }
/// ```
public struct Generator {
    /// One generated source file.
    public struct File: Sendable, Hashable {
        /// The file's name, without directory.
        public var name: String
        /// The Swift source.
        public var contents: String

        /// - Parameters:
        ///   - name: the file's name, without directory.
        ///   - contents: the Swift source.
        public init(name: String, contents: String) {
            self.name = name
            self.contents = contents
        }
    }

    /// An error in the snapshot that no Swift can be made from.
    public struct GeneratorError: Error, CustomStringConvertible, Sendable {
        /// What is wrong.
        public var description: String
    }

    let snapshot: ModelSnapshot
    /// Entities by model name, sorted by it.
    let entities: [(name: String, entity: ModelSnapshot.Entity)]
    let typeNames: [String: String]
    /// Enum types' labels, by the catalog's type name.
    let enums: [String: [String]]
    /// Enum types' Swift names, by the catalog's type name.
    let enumTypeNames: [String: String]
    static let enumMark = "\u{10FFFF}"
    /// Composite types used by columns (and nested in them), by the catalog's type name.
    let composites: [String: ModelSnapshot.Composite]
    /// Composite types' Swift names, by the catalog's type name.
    let compositeTypeNames: [String: String]
    static let compositeMark = "\u{10FFFF}\u{10FFFF}"
    let relationshipsByTable: [QualifiedTable: [ModelSnapshot.Relationship]]
    /// Model names by schema and table.
    let modelNames: [QualifiedTable: String]
    /// The Swift types the configuration gives JSON columns, by entity name and column.
    let jsonTypes: [String: [String: String]]
    /// The type that encodes and decodes them.
    let jsonCoder: String

    struct QualifiedTable: Hashable {
        var schema: String
        var table: String
    }

    /// The name of the file that holds the model's fingerprint and entity list.
    public static let modelFileName = "RelateModel.swift"

    /// The Swift type names generated code uses itself: an entity named like one of them
    /// takes the suffix `Entity`.
    public static let reservedTypeNames: Set<String> = [
        "Values", "Draft", "Columns", "PrimaryKey", "CodingKeys", "Swift", "Foundation", "Relate", "RelatePostgres", "Int",
        "String", "Double", "Float", "Bool", "Date", "Decimal", "UUID", "Data", "Optional", "Array", "Never", "Error",
        "Sendable", "Codable", "Hashable", "Sequence", "Collection", "DatabaseObject", "DatabaseContext", "RelatedObjects",
        "RelationshipSet", "TypedObject", "TypedEntity", "TypedAttribute", "TypedRelationship", "TypedChange", "TypedDraft",
        "TypedAssignments", "TypedColumns", "AttributeColumn", "ToManyColumn", "Condition", "Ordering", "Key", "RelateModel",
        "Self", "Type", "Protocol", "Any", "AnyObject",
    ]

    /// The member names of a generated type: a column or relationship named like one of
    /// them takes the suffix `Column` or `Relationship`.
    public static let reservedPropertyNames: Set<String> = [
        "object", "values", "update", "entity", "changes", "hashValue", "hash", "description", "prefix", "assignments",
        "init", "self", "Type", "Self",
    ]

    /// - Parameters:
    ///   - snapshot: the model, as `relate inspect --format json` describes it.
    ///   - configuration: what `relate-generate.json` or the options say: the `Codable`
    ///     types of JSON columns and their coder.
    /// - Throws: ``GeneratorError`` when two entities have one name, or the configuration
    ///   names a column the model lacks or one that is not `json` or `jsonb`.
    public init(_ snapshot: ModelSnapshot, configuration: GeneratorConfiguration = GeneratorConfiguration()) throws {
        self.snapshot = snapshot
        var named: [String: ModelSnapshot.Entity] = [:]
        var modelNames: [QualifiedTable: String] = [:]
        let firstSchema = snapshot.firstSchema
        for entity in snapshot.entities {
            let name = entity.modelName ?? (entity.schema == firstSchema ? entity.name : "\(entity.schema).\(entity.name)")
            modelNames[QualifiedTable(schema: entity.schema, table: entity.name)] = name
            if named[name] != nil { throw GeneratorError(description: "two entities are named \"\(name)\"") }
            named[name] = entity
        }
        self.modelNames = modelNames
        jsonTypes = try Self.jsonTypes(configuration.types ?? [:], entities: named)
        jsonCoder = configuration.jsonCoder ?? "DefaultJSONCoder"
        relationshipsByTable = Dictionary(grouping: snapshot.relationships) { QualifiedTable(schema: $0.from.schema, table: $0.from.table) }
        entities = named.sorted { Self.precedes($0.key, $1.key) }.map { ($0.key, $0.value) }
        var enums: [String: [String]] = [:]
        for (_, entity) in entities {
            for attribute in entity.attributes {
                if let labels = attribute.enumLabels, !labels.isEmpty, enums[Self.enumTypeName(attribute)] == nil {
                    enums[Self.enumTypeName(attribute)] = labels
                }
            }
        }
        var composites: [String: ModelSnapshot.Composite] = [:]
        func collect(_ composite: ModelSnapshot.Composite) {
            guard composites[composite.name] == nil else { return }
            composites[composite.name] = composite
            for field in composite.fields {
                field.composite.map(collect)
                // An enum field gets the generated enum, as a column of that type does.
                if let labels = field.enumLabels, !labels.isEmpty, !field.type.hasSuffix("[]"), enums[field.type] == nil {
                    enums[field.type] = labels
                }
            }
        }
        for (_, entity) in entities { for attribute in entity.attributes { attribute.composite.map(collect) } }
        self.enums = enums
        self.composites = composites
        // Entities, enums and composites share one namespace; an enum's key is its type's
        // name after a character no entity name holds, which sorts after every other, a
        // composite's after two: on a clash, the entity keeps the name, then the enum.
        let allNames = SwiftNames.uniqueNames(
            for: entities.map(\.name) + enums.keys.map { Self.enumMark + $0 } + composites.keys.map { Self.compositeMark + $0 },
            reserved: Self.reservedTypeNames, suffix: "Entity",
            camel: { name in
                SwiftNames.upperCamel(
                    name.hasPrefix(Self.compositeMark) ? String(name.dropFirst(2)) : name.hasPrefix(Self.enumMark) ? String(name.dropFirst()) : name)
            })
        typeNames = allNames.filter { !$0.key.hasPrefix(Self.enumMark) }
        enumTypeNames = Dictionary(
            uniqueKeysWithValues: allNames.filter { $0.key.hasPrefix(Self.enumMark) && !$0.key.hasPrefix(Self.compositeMark) }
                .map { (String($0.key.dropFirst()), $0.value) })
        compositeTypeNames = Dictionary(
            uniqueKeysWithValues: allNames.filter { $0.key.hasPrefix(Self.compositeMark) }.map { (String($0.key.dropFirst(2)), $0.value) })
    }

    /// The configuration's `entity.column` types by entity and column, each checked to name
    /// a `json` or `jsonb` column (or a domain over one) of the model.
    static func jsonTypes(_ types: [String: String], entities: [String: ModelSnapshot.Entity]) throws -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (path, swiftType) in types.sorted(by: { precedes($0.key, $1.key) }) {
            guard let dot = path.lastIndex(of: ".") else {
                throw GeneratorError(description: "type \(path)=\(swiftType): expected table.column")
            }
            let entityName = String(path[..<dot]), column = String(path[path.index(after: dot)...])
            guard let entity = entities[entityName] else {
                throw GeneratorError(description: "type \(path)=\(swiftType): the model has no entity \"\(entityName)\"")
            }
            guard let attribute = entity.attributes.first(where: { $0.name == column }) else {
                throw GeneratorError(description: "type \(path)=\(swiftType): \"\(entityName)\" has no column \"\(column)\"")
            }
            guard ["json", "jsonb"].contains(attribute.baseType ?? attribute.type) else {
                throw GeneratorError(
                    description: "type \(path)=\(swiftType): column \"\(column)\" is \(attribute.type); only json and jsonb columns take a Codable type")
            }
            result[entityName, default: [:]][column] = swiftType.trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    static func precedes(_ a: String, _ b: String) -> Bool {
        Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
    }

    /// The Swift type generated for an entity (`person_title_rel` → `PersonTitleRel`).
    ///
    /// - Parameter entityName: the entity's name in the model (`person`, `schema.table`).
    /// - Returns: the type's name, escaped for source; `nil` for an entity the model lacks.
    public func typeName(ofEntity entityName: String) -> String? {
        typeNames[entityName].map(SwiftNames.escaped)
    }

    /// The file an entity's type is generated in: `RelateModel+<entity name>.swift`, with
    /// every character but ASCII letters, digits, `_`, `.` and `-` written as `_` and its
    /// UTF-8 bytes in hexadecimal. The `RelateGenerator` plugin names its outputs by the
    /// same rule.
    ///
    /// - Parameter entityName: the entity's name in the model.
    /// - Returns: the file's name.
    public static func fileName(ofEntity entityName: String) -> String {
        var escaped = ""
        for byte in entityName.utf8 {
            let scalar = Unicode.Scalar(byte)
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                || byte == 0x2E || byte == 0x2D
            {
                escaped.unicodeScalars.append(scalar)
            } else {
                escaped += "_" + String(byte, radix: 16, uppercase: true)
            }
        }
        return "RelateModel+\(escaped).swift"
    }

    /// Every file, the model's first, then the entities' in the order of their names.
    ///
    /// - Returns: the files' names and contents.
    public func files() -> [File] {
        var files = [File(name: Self.modelFileName, contents: modelFile())]
        for (name, entity) in entities {
            files.append(File(name: Self.fileName(ofEntity: name), contents: entityFile(name: name, entity: entity)))
        }
        return files
    }

    // MARK: - Fingerprints

    /// The canonical text of what an entity's generated type depends on.
    func canonical(name: String, entity: ModelSnapshot.Entity) -> String {
        var lines = ["entity \(name)"]
        for attribute in entity.attributes {
            lines.append(
                "attribute \(attribute.name) key \(attribute.key ?? attribute.name) type \(attribute.type) \(attribute.nullable ? "null" : "not null")"
                    + (attribute.enumLabels.map { " labels \($0.joined(separator: ","))" } ?? "")
                    + (attribute.baseType.map { " base \($0)" } ?? ""))
        }
        for relationship in relationships(of: entity) {
            lines.append(
                "relationship \(relationship.key) \(relationship.kind) to \(targetName(relationship)) "
                    + "\(relationship.from.columns.joined(separator: ",")) -> \(relationship.to.columns.joined(separator: ","))"
                    + (relationship.via.map { " via \(entityName(schema: $0.schema, table: $0.table))" } ?? ""))
        }
        return lines.joined(separator: "\n")
    }

    /// FNV-1a, 64 bits, in hexadecimal: stable across runs and platforms (unlike `Hasher`).
    static func fingerprint(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The fingerprint of the whole model: of every entity's canonical text.
    ///
    /// - Returns: Sixteen hexadecimal digits, which the generated code holds (`RelateModel.fingerprint`):
    ///   they change when an entity, attribute or relationship does.
    public func modelFingerprint() -> String {
        Self.fingerprint(entities.map { canonical(name: $0.name, entity: $0.entity) }.joined(separator: "\n\n"))
    }

    // MARK: - Pieces

    func relationships(of entity: ModelSnapshot.Entity) -> [ModelSnapshot.Relationship] {
        (relationshipsByTable[QualifiedTable(schema: entity.schema, table: entity.name)] ?? [])
            .sorted { Self.precedes($0.key, $1.key) }
    }

    /// The Swift type of a column's non-NULL values: the configuration's for a JSON column
    /// given one, a generated enum for an enum type with labels (an array of it for
    /// `mood[]`), else ``TypeMapping/swiftType(of:)``.
    func swiftType(of attribute: ModelSnapshot.Attribute, in entity: String) -> String {
        if let type = jsonType(of: attribute, in: entity) { return type }
        if let composite = attribute.composite, let name = compositeTypeNames[composite.name].map(SwiftNames.escaped) {
            return Self.isArray(attribute) ? "[\(name)]" : name
        }
        if let name = enumTypeName(of: attribute) { return Self.isArray(attribute) ? "[\(name)]" : name }
        return TypeMapping.swiftType(of: attribute)
    }

    /// The `Codable` type the configuration gives a JSON column, if any.
    func jsonType(of attribute: ModelSnapshot.Attribute, in entity: String) -> String? {
        jsonTypes[entity]?[attribute.name]
    }

    /// The Swift name of the generated enum of an enum column (or of its elements').
    func enumTypeName(of attribute: ModelSnapshot.Attribute) -> String? {
        guard let labels = attribute.enumLabels, !labels.isEmpty else { return nil }
        return enumTypeNames[Self.enumTypeName(attribute)].map(SwiftNames.escaped)
    }

    /// Whether the column is an array (its type's name ends in `[]`).
    static func isArray(_ attribute: ModelSnapshot.Attribute) -> Bool {
        attribute.type.hasSuffix("[]")
    }

    /// The catalog's name of an enum column's type, or of its elements' for an array.
    static func enumTypeName(_ attribute: ModelSnapshot.Attribute) -> String {
        isArray(attribute) ? String(attribute.type.dropLast(2)) : attribute.type
    }

    func entityName(schema: String, table: String) -> String {
        modelNames[QualifiedTable(schema: schema, table: table)] ?? "\(schema).\(table)"
    }

    func targetName(_ relationship: ModelSnapshot.Relationship) -> String {
        entityName(schema: relationship.to.schema, table: relationship.to.table)
    }

    struct Property {
        enum Role {
            case attribute(index: Int, ModelSnapshot.Attribute)
            case relationship(ModelSnapshot.Relationship)
        }
        var key: String
        var swiftName: String
        var role: Role
    }

    /// The entity's attributes and relationships with their Swift names, attributes first
    /// in column order, then relationships by key.
    func properties(of entity: ModelSnapshot.Entity) -> [Property] {
        let attributes = entity.attributes.enumerated().map { ($0.element.key ?? $0.element.name, Property.Role.attribute(index: $0.offset, $0.element)) }
        let relationships = relationships(of: entity).map { ($0.key, Property.Role.relationship($0)) }
        let all = attributes + relationships
        var reservedHits: [String: String] = [:]
        for (key, role) in all {
            if case .relationship = role { reservedHits[key] = "Relationship" } else { reservedHits[key] = "Column" }
        }
        // Attributes and relationships share one namespace; the suffix for a reserved
        // name depends on what the key is.
        let attributeNames = SwiftNames.uniqueNames(
            for: all.map(\.0), reserved: Self.reservedPropertyNames, suffix: "Column", camel: { key in
                let name = SwiftNames.lowerCamel(key)
                return Self.reservedPropertyNames.contains(name) ? name + (reservedHits[key] ?? "Column") : name
            })
        return all.map { Property(key: $0.0, swiftName: attributeNames[$0.0]!, role: $0.1) }
    }

    // MARK: - Files

    static let header = """
        // Generated by Relate (`relate generate`, or the RelateGenerator plugin) from the model's
        // JSON description. Do not edit: regenerate when the schema changes.

        """

    func modelFile() -> String {
        var out = Self.header
        // Composite structs may hold `Data`.
        out += composites.isEmpty ? "" : "\nimport Foundation"
        out += """

            import Relate

            /// The model the types of this module were generated from.
            public enum RelateModel {
                /// The fingerprint of every entity, attribute (type, nullability) and relationship
                /// the generated types were made from.
                public static let fingerprint = \(SwiftNames.literal(modelFingerprint()))

                /// Every generated entity, sorted by name.
                public static let entities: [TypedEntity] = [

            """
        for (name, _) in entities {
            out += "        \(typeNames[name].map(SwiftNames.escaped)!).entity,\n"
        }
        out += """
                ]

                /// Checks every generated type against `context`'s model at once (each type is
                /// otherwise checked on its first use).
                ///
                /// - Parameter context: the context whose model to check.
                /// - Throws: `RelateError` of kind `.schemaChanged` naming the first difference.
                public static func check(_ context: DatabaseContext) throws {
                    for entity in entities { try context.check(entity) }
                }
            }

            """
        for (type, labels) in enums.sorted(by: { Self.precedes($0.key, $1.key) }) {
            let name = SwiftNames.escaped(enumTypeNames[type]!)
            out += "\n/// The labels of PostgreSQL enum `\(type)`, in order. A label the database has and this\n"
            out += "/// type lacks is an error when read: regenerate.\n"
            out += "public enum \(name): String, TypedEnum, CaseIterable {\n"
            out += Self.enumCases(labels)
            out += "}\n"
        }
        for (type, composite) in composites.sorted(by: { Self.precedes($0.key, $1.key) }) {
            out += compositeStruct(type, composite)
        }
        return out
    }

    /// The cases of an enum of `labels`, and where two labels differ only in their Unicode
    /// form (a composed and a decomposed `é`, which PostgreSQL tells apart by their bytes),
    /// the means to tell them apart: Swift's `String` takes them for one, as names and as
    /// raw values. The first keeps its name and the others are numbered (`café_2`), their
    /// raw values are written with every non-ASCII scalar escaped (so that no editor's
    /// normalization of the source merges them), and `init?(rawValue:)` compares bytes.
    static func enumCases(_ labels: [String]) -> String {
        var firsts: [String] = []
        var twinOf: [Int: String] = [:]
        for (position, label) in labels.enumerated() {
            if let first = firsts.first(where: { $0 == label && !$0.utf8.elementsEqual(label.utf8) }) {
                twinOf[position] = first
            } else {
                firsts.append(label)
            }
        }
        let cases = SwiftNames.uniqueNames(
            for: firsts, reserved: ["allCases", "rawValue", "init", "hashValue", "self", "Self", "Type"], suffix: "Case",
            camel: SwiftNames.lowerCamel)
        var taken = Set(cases.values)
        var out = ""
        for (position, label) in labels.enumerated() {
            guard let first = twinOf[position] else {
                let caseName = cases[label]!
                let literal = twinOf.values.contains(label) ? SwiftNames.asciiLiteral(label) : SwiftNames.literal(label)
                out += "    case \(SwiftNames.escaped(caseName))" + (caseName == label && twinOf.isEmpty ? "" : " = \(literal)") + "\n"
                continue
            }
            var number = 2
            while taken.contains("\(cases[first]!)_\(number)") { number += 1 }
            let caseName = "\(cases[first]!)_\(number)"
            taken.insert(caseName)
            out += "    case \(caseName) = \(SwiftNames.asciiLiteral(label))\n"
        }
        guard !twinOf.isEmpty else { return out }
        out += """

                /// The case whose label is `rawValue` byte for byte: Swift's `==` takes labels
                /// that differ only in their Unicode form for one.
                public init?(rawValue: String) {
                    guard let found = Self.allCases.first(where: { $0.rawValue.utf8.elementsEqual(rawValue.utf8) }) else { return nil }
                    self = found
                }

            """
        return out
    }

    /// The struct of a composite type: its fields as optional properties, read from a
    /// `PostgresRecord` and written as one.
    func compositeStruct(_ type: String, _ composite: ModelSnapshot.Composite) -> String {
        let name = SwiftNames.escaped(compositeTypeNames[type]!)
        let names = SwiftNames.uniqueNames(
            for: composite.fields.map(\.name), reserved: ["compositeFieldValues", "init", "self", "Self", "Type", "hashValue"],
            suffix: "Field", camel: SwiftNames.lowerCamel)
        let fields = composite.fields.enumerated().map { index, field in
            (swiftName: SwiftNames.escaped(names[field.name]!), label: SwiftNames.label(names[field.name]!), field: field,
             typeAndRead: fieldType(field, at: index))
        }
        var out = "\n/// The fields of PostgreSQL composite type `\(composite.name)`, in order; each is\n"
        out += "/// optional, as a composite's fields take NULL. Read from the record's binary form, written as one.\n"
        out += "public struct \(name): TypedComposite {\n"
        for field in fields {
            out += "    /// Field `\(field.field.name)` (`\(field.field.type)`).\n"
            out += "    public var \(field.swiftName): \(field.typeAndRead.type)?\n"
        }
        out += "\n    /// The fields, one argument each.\n"
        out += "    public init(" + fields.map { "\($0.label): \($0.typeAndRead.type)? = nil" }.joined(separator: ", ") + ") {\n"
        for field in fields { out += "        self.\(field.swiftName) = \(field.swiftName)\n" }
        out += "    }\n\n"
        out += "    /// Reads a record of `\(composite.name)`.\n"
        out += "    public init(record: PostgresRecord) throws {\n"
        for field in fields { out += "        \(field.swiftName) = try \(field.typeAndRead.read)\n" }
        out += "    }\n\n"
        out += "    /// The fields' values, in order.\n"
        out += "    public var compositeFieldValues: [(any Sendable)?] { [" + fields.map(\.swiftName).joined(separator: ", ") + "] }\n"
        out += "}\n"
        return out
    }

    /// A composite field's Swift type and the expression that reads it from `record`: a
    /// nested composite's struct, the generated enum, a mapped type, or the bytes (`Data`) of
    /// a type without a mapping in binary (`money`, `tsvector`, an array of an enum…).
    func fieldType(_ field: ModelSnapshot.Field, at index: Int) -> (type: String, read: String) {
        let isArray = field.type.hasSuffix("[]")
        if !isArray, field.enumLabels?.isEmpty == false, let name = enumTypeNames[field.type].map(SwiftNames.escaped) {
            return (name, "TypedCompositeFields.enumeration(\(name).self, in: record, at: \(index))")
        }
        if let nested = field.composite, let name = compositeTypeNames[nested.name].map(SwiftNames.escaped) {
            return isArray
                ? ("[\(name)]", "TypedCompositeFields.composites(\(name).self, in: record, at: \(index))")
                : (name, "TypedCompositeFields.composite(\(name).self, in: record, at: \(index))")
        }
        let element = isArray ? String(field.type.dropLast(2)) : field.type
        let mapped = element != "money" && TypeMapping.scalars[element] != nil && (!isArray || TypeMapping.arrayElements.contains(element))
        guard mapped else { return ("Data", "TypedCompositeFields.bytes(record, at: \(index))") }
        let type = TypeMapping.swiftType(typeName: field.type)
        return (type, "record.decode(\(type).self, at: \(index))")
    }

    /// The doc comment's lines that say which key tells the rows apart, when it is not the
    /// primary key (empty otherwise), each ending with a newline and the indentation of the
    /// line after it.
    static func keyDocumentation(of entity: ModelSnapshot.Entity) -> String {
        let columns = entity.primaryKey.map { "`\($0)`" }.joined(separator: ", ")
        let sentence: String
        switch entity.keySource {
        case "unique-constraint":
            sentence = "Keyed by the unique constraint `\(entity.keyName ?? "")` (\(columns)): the table has no primary key."
        case "unique-index":
            sentence = "Keyed by the unique index `\(entity.keyName ?? "")` (\(columns)): the table has neither a primary key nor a unique constraint."
        case "override":
            sentence = "Keyed by \(columns), as an override declares (`Override.primaryKey(of:columns:)`)."
        case "view":
            sentence = "Keyed by \(columns): the view carries the key of the table it reads (`\(entity.keyName ?? "")`)."
        case nil where entity.primaryKey.isEmpty:
            sentence = "It has no key: its rows are read, never written or opened by key."
        default:
            return ""
        }
        return "///\n/// \(sentence)\n"
    }

    func entityFile(name: String, entity: ModelSnapshot.Entity) -> String {
        let typeName = SwiftNames.escaped(typeNames[name]!)
        let properties = properties(of: entity)
        let qualified = name
        var out = Self.header
        out += """

            import Foundation
            import Relate

            /// A row of \(entity.kind == "table" ? "table" : entity.kind) `\(qualified)`: a typed view of its `DatabaseObject`,
            /// which ``object`` is. Attributes read as throwing getters, relationships as typed
            /// objects and `RelatedObjects`; every write goes to the database at once.
            \(Self.keyDocumentation(of: entity))public struct \(typeName): TypedObject {

            """
        // The description checked against the live model.
        out += "    /// What this type was generated from, checked against the live model on its first use\n"
        out += "    /// in a context.\n"
        out += "    public static let entity = TypedEntity(\n"
        out += "        name: \(SwiftNames.literal(name)),\n"
        out += "        attributes: [\n"
        for attribute in entity.attributes {
            var arguments = "name: \(SwiftNames.literal(attribute.name))"
            if let key = attribute.key, key != attribute.name { arguments += ", key: \(SwiftNames.literal(key))" }
            arguments += ", type: \(SwiftNames.literal(attribute.type)), nullable: \(attribute.nullable)"
            if enumTypeName(of: attribute) != nil, let labels = attribute.enumLabels {
                // Escaped where labels differ only in their Unicode form (``enumCases(_:)``).
                let literal = Set(labels).count < labels.count ? SwiftNames.asciiLiteral : SwiftNames.literal
                arguments += ", enumLabels: [\(labels.map(literal).joined(separator: ", "))]"
            }
            if let composite = attribute.composite {
                arguments += ", compositeFields: [\(composite.fields.map { SwiftNames.literal("\($0.name) \($0.type)") }.joined(separator: ", "))]"
            }
            out += "            TypedAttribute(\(arguments)),\n"
        }
        out += "        ],\n"
        out += "        relationships: [\n"
        for property in properties {
            guard case .relationship(let relationship) = property.role else { continue }
            var arguments = "key: \(SwiftNames.literal(relationship.key)), kind: \(SwiftNames.literal(relationship.kind))"
            arguments += ", target: \(SwiftNames.literal(targetName(relationship)))"
            arguments += ", columns: [\(relationship.from.columns.map(SwiftNames.literal).joined(separator: ", "))]"
            arguments += ", targetColumns: [\(relationship.to.columns.map(SwiftNames.literal).joined(separator: ", "))]"
            if let via = relationship.via {
                arguments += ", via: \(SwiftNames.literal(entityName(schema: via.schema, table: via.table)))"
            }
            out += "            TypedRelationship(\(arguments)),\n"
        }
        out += "        ],\n"
        out += "        fingerprint: \(SwiftNames.literal(Self.fingerprint(canonical(name: name, entity: entity)))))\n\n"

        // Primary key.
        let keyTypes = entity.primaryKey.compactMap { column in entity.attributes.first { $0.name == column } }.map {
            swiftType(of: $0, in: name)
        }
        let primaryKey = keyTypes.count == 1 ? keyTypes[0] : "[any Sendable]"
        out += "    /// The \(entity.keySource.map { $0 == "primary-key" ? "primary key" : "key (\($0))" } ?? "primary key")'s type: "
        out += entity.primaryKey.isEmpty
            ? "this entity has none.\n"
            : keyTypes.count == 1 ? "its one column's.\n" : "its columns' values in key order.\n"
        out += "    public typealias PrimaryKey = \(primaryKey)\n\n"
        out += """
                /// The row's object, the dynamic layer beneath.
                public let object: DatabaseObject

                /// Wraps `object` without checking its entity or the model: for objects the typed
                /// API made itself. Use `init(_:)` for any other.
                public init(unchecked object: DatabaseObject) {
                    self.object = object
                }

            """

        // Getters.
        for property in properties {
            let swiftName = SwiftNames.escaped(property.swiftName)
            switch property.role {
            case .attribute(let index, let attribute):
                let type = swiftType(of: attribute, in: name)
                out += "\n    /// Column `\(attribute.name)` (`\(attribute.type)`\(attribute.nullable ? "" : ", not null")).\n"
                let enumName = enumTypeName(of: attribute)
                let isJSON = jsonType(of: attribute, in: name) != nil
                let compositeName = attribute.composite.flatMap { compositeTypeNames[$0.name] }.map(SwiftNames.escaped)
                let read = isJSON ? "JSON" : compositeName != nil ? (Self.isArray(attribute) ? "CompositeArray" : "Composite")
                    : enumName == nil ? "Value" : Self.isArray(attribute) ? "EnumArray" : "Enum"
                let readType = Self.isArray(attribute) ? enumName ?? compositeName ?? type : type
                let coder = isJSON ? ", coder: \(jsonCoder).self" : ""
                if attribute.nullable {
                    out += "    public var \(swiftName): \(type)? {\n"
                    out += "        get throws { try object.generatedOptional\(read)(at: \(index), as: \(readType).self\(coder)) }\n"
                } else {
                    out += "    public var \(swiftName): \(type) {\n"
                    out += "        get throws { try object.generated\(read)(at: \(index), as: \(readType).self\(coder)) }\n"
                }
                out += "    }\n"
            case .relationship(let relationship):
                let target = SwiftNames.escaped(typeNames[targetName(relationship)] ?? "Never")
                let key = SwiftNames.literal(relationship.key)
                if relationship.isToMany {
                    out += "\n    /// \(relationship.kind == "many-to-many" ? "Many-to-many" : "To-many") relationship `\(relationship.key)` to `\(targetName(relationship))`"
                    out += relationship.via.map { " through `\($0.table)`" } ?? ""
                    out += ": written through at once.\n"
                    out += "    public var \(swiftName): RelatedObjects<\(target)> {\n"
                    out += "        get throws { try RelatedObjects(object.objects(forKey: \(key))) }\n"
                    out += "    }\n"
                } else {
                    out += "\n    /// To-one relationship `\(relationship.key)` to `\(targetName(relationship))`; set it with "
                    out += "`\(setterName(property, in: properties))(_:)`.\n"
                    out += "    public var \(swiftName): \(target)? {\n"
                    out += "        get throws { try object.object(forKey: \(key)).map { try \(target)($0) } }\n"
                    out += "    }\n\n"
                    out += "    /// Sets to-one relationship `\(relationship.key)` at once: an `UPDATE` of the foreign key\n"
                    out += "    /// (a one-to-one steals the target from whoever held it); `nil` clears it.\n"
                    out += "    ///\n"
                    out += "    /// - Parameter \(property.swiftName): the object to relate, of the same context.\n"
                    out += "    /// - Throws: `RelateError` when the database refuses the write.\n"
                    out += "    public func \(setterName(property, in: properties))(_ \(swiftName): \(target)?) throws {\n"
                    out += "        try object.setValue(\(swiftName)?.object, forKey: \(key))\n"
                    out += "    }\n"
                }
            }
        }

        // Values.
        let attributeProperties = properties.compactMap { property -> (Property, Int, ModelSnapshot.Attribute)? in
            if case .attribute(let index, let attribute) = property.role { return (property, index, attribute) }
            return nil
        }
        func valueType(_ attribute: ModelSnapshot.Attribute) -> String {
            swiftType(of: attribute, in: name) + (attribute.nullable ? "?" : "")
        }
        out += """

                /// The attributes as a value: `Sendable`, `Codable`, `Hashable`, for leaving a unit of
                /// work, and what `update(_:)` hands its closure.
                public struct Values: Sendable, Codable, Hashable {

            """
        for (property, _, attribute) in attributeProperties {
            out += "        public var \(SwiftNames.escaped(property.swiftName)): \(valueType(attribute))\n"
        }
        out += "\n        /// The attributes, one argument each.\n"
        out += "        public init("
        out += attributeProperties.map { "\(SwiftNames.escaped($0.0.swiftName)): \(valueType($0.2))" }.joined(separator: ", ")
        out += ") {\n"
        for (property, _, _) in attributeProperties {
            let swiftName = SwiftNames.escaped(property.swiftName)
            out += "            self.\(swiftName) = \(swiftName)\n"
        }
        out += "        }\n    }\n\n"
        out += "    /// Every attribute, read at once.\n"
        out += "    public var values: Values {\n"
        out += "        get throws {\n"
        out += "            try Values("
        out += attributeProperties.map { "\(SwiftNames.label($0.0.swiftName)): \(SwiftNames.escaped($0.0.swiftName))" }.joined(separator: ", ")
        out += ")\n        }\n    }\n\n"
        out += "    /// The attributes that differ between `old` and `new`, by attribute index.\n"
        out += "    public static func changes(from old: Values, to new: Values) -> [TypedChange] {\n"
        out += "        var changes: [TypedChange] = []\n"
        for (property, index, attribute) in attributeProperties {
            let swiftName = SwiftNames.escaped(property.swiftName)
            // A JSON column's value enters the dynamic layer as its document, encoded here once.
            let value = jsonType(of: attribute, in: name) == nil ? "new.\(swiftName)" : "TypedJSON.encoded(new.\(swiftName), coder: \(jsonCoder).self)"
            out += "        if old.\(swiftName) != new.\(swiftName) { changes.append(TypedChange(index: \(index), value: \(value))) }\n"
        }
        out += "        return changes\n    }\n"

        // Draft.
        out += """

                /// A row to insert: what `DatabaseContext.insert(_:_:)` hands its closure. Only the
                /// properties set are sent; the others take their defaults. A nullable column set to
                /// `nil` is sent as NULL.
                public struct Draft: TypedDraft {
                    /// The values set so far, by key.
                    public var assignments = TypedAssignments()

                    /// An empty draft: every column takes its default.
                    public init() {}

            """
        for (property, _, attribute) in attributeProperties {
            let swiftName = SwiftNames.escaped(property.swiftName)
            let type = swiftType(of: attribute, in: name)
            let key = SwiftNames.literal(property.key)
            out += "\n        /// Column `\(attribute.name)`.\n"
            out += "        public var \(swiftName): \(type)? {\n"
            if jsonType(of: attribute, in: name) != nil {
                out += "            get { TypedJSON.value(in: assignments, forKey: \(key), as: \(type).self, coder: \(jsonCoder).self) }\n"
                out += "            set { assignments.set(TypedJSON.encoded(newValue, coder: \(jsonCoder).self), forKey: \(key), nullable: \(attribute.nullable)) }\n"
            } else if let enumName = enumTypeName(of: attribute), Self.isArray(attribute) {
                out += "            get { assignments.value(forKey: \(key), as: [String].self).map { $0.compactMap(\(enumName).init(rawValue:)) } }\n"
                out += "            set { assignments.set(newValue?.map(\\.rawValue), forKey: \(key), nullable: \(attribute.nullable)) }\n"
            } else if enumTypeName(of: attribute) != nil {
                out += "            get { assignments.value(forKey: \(key), as: String.self).flatMap(\(type).init(rawValue:)) }\n"
                out += "            set { assignments.set(newValue?.rawValue, forKey: \(key), nullable: \(attribute.nullable)) }\n"
            } else {
                out += "            get { assignments.value(forKey: \(key), as: \(type).self) }\n"
                out += "            set { assignments.set(newValue, forKey: \(key), nullable: \(attribute.nullable)) }\n"
            }
            out += "        }\n"
        }
        for property in properties {
            guard case .relationship(let relationship) = property.role, !relationship.isToMany, relationship.foreignKeyIn == "from"
            else { continue }
            let swiftName = SwiftNames.escaped(property.swiftName)
            let target = SwiftNames.escaped(typeNames[targetName(relationship)] ?? "Never")
            let key = SwiftNames.literal(relationship.key)
            out += "\n        /// To-one relationship `\(relationship.key)`: its foreign key's columns.\n"
            out += "        public var \(swiftName): \(target)? {\n"
            out += "            get { assignments.object(forKey: \(key), as: \(target).self) }\n"
            out += "            set { assignments.setObject(newValue?.object, forKey: \(key)) }\n"
            out += "        }\n"
        }
        out += "    }\n"

        // Columns.
        out += """

                /// The attributes and relationships as typed key paths, for conditions and sort orders:
                /// `{ $0.surname == "Hopper" }`, `{ [$0.surname.ascending] }`.
                public struct Columns: TypedColumns {
                    /// The key path that leads here (`""`, or `"person."` through a to-one).
                    public let prefix: String

                    /// Columns reached through `prefix`.
                    public init(prefix: String) {
                        self.prefix = prefix
                    }

            """
        for property in properties {
            let swiftName = SwiftNames.escaped(property.swiftName)
            let key = SwiftNames.literal(property.key)
            switch property.role {
            case .attribute(_, let attribute):
                out += "\n        /// Column `\(attribute.name)`.\n"
                if jsonType(of: attribute, in: name) != nil {
                    out += "        public var \(swiftName): TypedJSONColumn<\(valueType(attribute)), \(jsonCoder)> { TypedJSONColumn(prefix + \(key)) }\n"
                } else {
                    out += "        public var \(swiftName): AttributeColumn<\(valueType(attribute))> { AttributeColumn(prefix + \(key)) }\n"
                }
            case .relationship(let relationship):
                let target = SwiftNames.escaped(typeNames[targetName(relationship)] ?? "Never")
                if relationship.isToMany {
                    out += "\n        /// To-many relationship `\(relationship.key)`: `.any { … }`, `.all { … }`, `.none { … }`.\n"
                    out += "        public var \(swiftName): ToManyColumn<\(target)> { ToManyColumn(prefix + \(key)) }\n"
                } else {
                    out += "\n        /// To-one relationship `\(relationship.key)`: its target's columns.\n"
                    out += "        public var \(swiftName): \(target).Columns { \(target).Columns(prefix: prefix + \(SwiftNames.literal(relationship.key + "."))) }\n"
                }
            }
        }
        out += "    }\n}\n"
        return out
    }

    /// `set` and the property's name capitalized (`setPerson`); with the suffix
    /// `Relationship` when an attribute or relationship is already called that.
    func setterName(_ property: Property, in properties: [Property]) -> String {
        let name = property.swiftName
        let base = "set" + (name.first.map { $0.uppercased() + name.dropFirst() } ?? "")
        return properties.contains { $0.swiftName == base } ? base + "Relationship" : base
    }
}
