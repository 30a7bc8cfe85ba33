import ArgumentParser
import Foundation
import Relate

/// `--overrides FILE`: overrides as JSON, one object per override.
///
/// ```json
/// [ { "foreignKey": { "table": "book", "columns": ["authorId"], "references": "person",
///                     "referencedColumns": ["id"], "name": "author" } },
///   { "rename": { "table": "person", "key": "book_by_authorId", "to": "writtenBooks" } },
///   { "primaryKey": { "table": "customer_list", "columns": ["id"] } },
///   { "ignore": "audit_log" } ]
/// ```
enum OverridesFile {
    struct Entry: Decodable {
        struct ForeignKey: Decodable {
            var table: String
            var columns: [String]
            var references: String
            var referencedColumns: [String]?
            var name: String?
        }
        struct Rename: Decodable {
            var table: String
            var key: String
            var to: String
        }
        struct PrimaryKey: Decodable {
            var table: String
            var columns: [String]
        }
        var foreignKey: ForeignKey?
        var rename: Rename?
        var primaryKey: PrimaryKey?
        var ignore: String?
    }

    static func read(_ path: String) throws -> [Override] {
        let entries: [Entry]
        do {
            entries = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ValidationError("cannot read overrides from \(path): \(error)")
        }
        return try entries.enumerated().map { index, entry in
            switch (entry.foreignKey, entry.rename, entry.primaryKey, entry.ignore) {
            case (let key?, nil, nil, nil):
                return .foreignKey(key.table, key.columns, references: key.references, key.referencedColumns, name: key.name)
            case (nil, let rename?, nil, nil):
                return .rename(rename.table, key: rename.key, to: rename.to)
            case (nil, nil, let key?, nil):
                return .primaryKey(of: key.table, columns: key.columns)
            case (nil, nil, nil, let table?):
                return .ignore(table)
            default:
                throw ValidationError("override \(index + 1) in \(path): give exactly one of foreignKey, rename, primaryKey, ignore")
            }
        }
    }
}
