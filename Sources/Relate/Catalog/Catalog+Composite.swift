import Foundation
import RelatePostgres

extension Catalog {
    /// A composite type (`CREATE TYPE address AS (street text, zip int4)`): its fields, each
    /// with the OID its binary form carries, and the composite types of nested fields.
    /// What a composite column is read and written with, and generated as a struct from.
    public struct CompositeType: Sendable, Codable, Hashable {
        /// The type's schema.
        public var schema: String
        /// The type's name.
        public var name: String
        /// The type's OID, which an array of it names in its header.
        public var oid: UInt32
        /// The fields, in order.
        public var fields: [Field]

        /// - Parameters:
        ///   - schema: The type's schema.
        ///   - name: Its name.
        ///   - oid: Its OID.
        ///   - fields: Its fields in order.
        public init(schema: String, name: String, oid: UInt32, fields: [Field]) {
            self.schema = schema
            self.name = name
            self.oid = oid
            self.fields = fields
        }
    }

    /// A field of a ``CompositeType``.
    public struct Field: Sendable, Codable, Hashable {
        /// The field's name.
        public var name: String
        /// Its type's name (`int4`, `text[]`, a composite's or enum's name).
        public var type: String
        /// The OID its binary form carries in a record (`atttypid`: a domain's own).
        public var typeOID: UInt32
        /// For a field of a composite type, or an array of one: that type.
        public var composite: CompositeType?
        /// For a field of an enum type: its labels, in order (a generated struct gives the
        /// field the generated enum).
        public var enumLabels: [String]?

        /// - Parameters:
        ///   - name: The field's name.
        ///   - type: Its type's name.
        ///   - typeOID: Its type's OID.
        ///   - composite: Its composite type, for a nested composite or an array of one.
        ///   - enumLabels: Its enum type's labels, for a field of an enum type.
        public init(name: String, type: String, typeOID: UInt32, composite: CompositeType? = nil, enumLabels: [String]? = nil) {
            self.name = name
            self.type = type
            self.typeOID = typeOID
            self.composite = composite
            self.enumLabels = enumLabels
        }
    }

    /// Every composite type made with `CREATE TYPE … AS (…)` outside the system schemas:
    /// its OID, its array type's, schema, name and fields (names, type names, OIDs, for an
    /// array field the element type's OID, and for an enum field its labels as a JSON array:
    /// labels may hold any character, and an array of arrays must be rectangular).
    static let compositeTypesQuery = """
        SELECT t.oid::int8, t.typarray::int8, n.nspname::text, t.typname::text,
          array_agg(a.attname::text ORDER BY a.attnum),
          array_agg(CASE WHEN ft.typelem <> 0 AND ft.typlen = -1 THEN fe.typname::text || '[]' ELSE ft.typname::text END ORDER BY a.attnum),
          array_agg(a.atttypid::int8 ORDER BY a.attnum),
          array_agg((CASE WHEN ft.typelem <> 0 AND ft.typlen = -1 THEN ft.typelem ELSE ft.oid END)::int8 ORDER BY a.attnum),
          array_agg((SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder)::text FROM pg_enum e WHERE e.enumtypid = ft.oid)
                    ORDER BY a.attnum)
        FROM pg_type t
        JOIN pg_namespace n ON n.oid = t.typnamespace
        JOIN pg_class c ON c.oid = t.typrelid AND c.relkind = 'c'
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        JOIN pg_type ft ON ft.oid = a.atttypid
        LEFT JOIN pg_type fe ON fe.oid = ft.typelem
        WHERE t.typtype = 'c' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        GROUP BY t.oid, t.typarray, n.nspname, t.typname
        """

    /// The composite types of `compositeTypesQuery`'s rows by their OID and by their array
    /// type's OID, nested ones resolved (PostgreSQL refuses a type that contains itself).
    static func compositeTypes(_ rows: PostgresResult) throws -> [UInt32: CompositeType] {
        struct Row {
            var schema: String, name: String, oid: UInt32
            var fieldNames: [String], fieldTypes: [String], fieldOIDs: [Int], elementOIDs: [Int], enumLabels: [String?]
        }
        var raw: [UInt32: Row] = [:]
        var arrays: [UInt32: UInt32] = [:]
        for row in rows {
            let oid = UInt32(truncatingIfNeeded: try row.decode(Int.self, at: 0))
            arrays[UInt32(truncatingIfNeeded: try row.decode(Int.self, at: 1))] = oid
            raw[oid] = Row(
                schema: try row.decode(String.self, at: 2), name: try row.decode(String.self, at: 3), oid: oid,
                fieldNames: try row.decode([String].self, at: 4), fieldTypes: try row.decode([String].self, at: 5),
                fieldOIDs: try row.decode([Int].self, at: 6), elementOIDs: try row.decode([Int].self, at: 7),
                enumLabels: try row.decode([String?].self, at: 8))
        }
        var resolved: [UInt32: CompositeType] = [:]
        func resolve(_ oid: UInt32, depth: Int) -> CompositeType? {
            if let done = resolved[oid] { return done }
            guard let row = raw[oid], depth < 32 else { return nil }
            let fields = row.fieldNames.indices.map { index in
                Field(
                    name: row.fieldNames[index], type: row.fieldTypes[index], typeOID: UInt32(truncatingIfNeeded: row.fieldOIDs[index]),
                    composite: resolve(UInt32(truncatingIfNeeded: row.elementOIDs[index]), depth: depth + 1),
                    enumLabels: row.enumLabels[index].flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) })
            }
            let type = CompositeType(schema: row.schema, name: row.name, oid: oid, fields: fields)
            resolved[oid] = type
            return type
        }
        var result: [UInt32: CompositeType] = [:]
        for oid in raw.keys { result[oid] = resolve(oid, depth: 0) }
        for (array, element) in arrays { result[array] = result[element] }
        return result
    }
}
