import Foundation
import RelatePostgres

/// A payload of Relate's triggers, `{"x": transaction, "r": table oid, "s": schema, "t":
/// table, "k": "I"|"U"|"D", "keys": […], "old": […], "c": […], "n": count}`, or a stored
/// one's notice (`"id"` in place of the keys), or `{"ddl": 1}`: every field a listener
/// uses, each `nil` when it is missing or of another type. Anyone who may connect may
/// `NOTIFY`, so a field is a hint, read once here and never trusted further.
struct TriggerPayload {
    /// `x`: the writing transaction, which groups a transaction's notices into one event.
    var transaction: Int?
    /// `r`: the table's oid when the trigger ran.
    var relation: Int?
    /// `s` and `t`: the table's schema and name.
    var schema: String?
    var table: String?
    /// `k`: `I`, `U` or `D`.
    var kind: String?
    /// `keys` and `old`: the rows' keys (an update's before), as the server's text forms.
    var keys: [[String?]]?
    var oldKeys: [[String?]]?
    /// `c` and `n`: an update of one row's changed columns, and how many the trigger compared.
    var changedColumns: [String]?
    var comparedColumns: Int?
    /// `id`: the row of `relate_tracking.change` that holds the whole payload.
    var stored: Int?
    /// `ddl`: a definition may have changed (Relate's event triggers).
    var isDefinitionChange = false

    /// A notification's payload; `nil` when it is not a JSON object.
    init?(json: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        transaction = object["x"] as? Int
        relation = object["r"] as? Int
        schema = object["s"] as? String
        table = object["t"] as? String
        kind = object["k"] as? String
        keys = Self.texts(object["keys"])
        oldKeys = Self.texts(object["old"])
        changedColumns = object["c"] as? [String]
        comparedColumns = object["n"] as? Int
        stored = object["id"] as? Int
        isDefinitionChange = object["ddl"] != nil
    }

    /// JSON keys as the server's text forms (numbers as digits, strings as they are); `nil`
    /// (the table read again) when they are not an array of arrays of numbers and strings.
    private static func texts(_ value: Any?) -> [[String?]]? {
        guard let keys = value as? [[Any]] else { return nil }
        var texts: [[String?]] = []
        texts.reserveCapacity(keys.count)
        for key in keys {
            var parts: [String?] = []
            for part in key {
                switch part {
                case let text as String: parts.append(text)
                case let number as NSNumber: parts.append(number.stringValue)
                default: return nil
                }
            }
            texts.append(parts)
        }
        return texts
    }

    /// Reads the payloads of `relate_tracking.change` whose ids are `$1`, taken apart by the
    /// server: the listener parses no JSON for them (parsing a stored payload and casting its
    /// values was a fifth of the feed's time). Each key array comes as its length and its
    /// parts in order, each part a scalar's text (`NULL` for `null`); the parts are `NULL`
    /// unless every key is an array of as many scalars as the others.
    static let storedSQL: String = {
        func number(_ field: String) -> String {
            "CASE jsonb_typeof(c.payload->'\(field)') WHEN 'number' THEN (c.payload->>'\(field)')::int8 END"
        }
        func text(_ field: String) -> String {
            "CASE jsonb_typeof(c.payload->'\(field)') WHEN 'string' THEN c.payload->>'\(field)' END"
        }
        func array(_ field: String) -> String {
            "CASE jsonb_typeof(c.payload->'\(field)') WHEN 'array' THEN c.payload->'\(field)' END"
        }
        func keys(_ field: String) -> String {
            """
            jsonb_array_length(\(array(field))),
                   (SELECT CASE WHEN count(DISTINCT k.position) = jsonb_array_length(\(array(field)))
                                 AND min(jsonb_array_length(k.value)) = max(jsonb_array_length(k.value))
                                 AND bool_and(jsonb_typeof(p.value) IN ('string', 'number', 'null'))
                                THEN array_agg(p.value #>> '{}' ORDER BY k.position, p.position) END
                      FROM jsonb_array_elements(\(array(field))) WITH ORDINALITY k(value, position),
                           jsonb_array_elements(CASE jsonb_typeof(k.value) WHEN 'array' THEN k.value END) WITH ORDINALITY p(value, position))
            """
        }
        return """
            SELECT c.id, \(number("x")), \(number("r")), \(text("s")), \(text("t")), \(text("k")),
                   \(keys("keys")),
                   \(keys("old")),
                   (SELECT CASE WHEN bool_and(jsonb_typeof(e) = 'string') THEN array_agg(e #>> '{}' ORDER BY position) END
                      FROM jsonb_array_elements(\(array("c"))) WITH ORDINALITY e(e, position)),
                   \(number("n"))
              FROM relate_tracking.change c
             WHERE c.id = ANY($1)
            """
    }()

    /// A row of ``storedSQL``.
    ///
    /// - Throws: A `PostgresDecodingError` for a row not of its shape.
    init(stored row: PostgresRow) throws {
        stored = try row.decode(Int.self, at: 0)
        transaction = try row.decode(Int?.self, at: 1)
        relation = try row.decode(Int?.self, at: 2)
        schema = try row.decode(String?.self, at: 3)
        table = try row.decode(String?.self, at: 4)
        kind = try row.decode(String?.self, at: 5)
        keys = Self.keys(count: try row.decode(Int?.self, at: 6), parts: try row.decode([String?]?.self, at: 7))
        oldKeys = Self.keys(count: try row.decode(Int?.self, at: 8), parts: try row.decode([String?]?.self, at: 9))
        changedColumns = try row.decode([String]?.self, at: 10)
        comparedColumns = try row.decode(Int?.self, at: 11)
    }

    /// `count` keys of equal width from their parts in order; `nil` when they do not divide.
    private static func keys(count: Int?, parts: [String?]?) -> [[String?]]? {
        guard let count, let parts, count > 0, !parts.isEmpty, parts.count % count == 0 else { return nil }
        let width = parts.count / count
        return stride(from: 0, to: parts.count, by: width).map { Array(parts[$0..<($0 + width)]) }
    }
}
