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

    /// Reads the payloads of `relate_tracking.change` whose ids are `$1`. Prepared: planning
    /// it at each run cost the server about 80 µs of its 150 (`pgbench -M extended` against
    /// `-M prepared`). Taking the JSON apart in the query instead, so that the listener would
    /// parse none, cost the server more than it saved the listener (+100 µs a run, against
    /// about 30 µs).
    static let storedSQL = "SELECT id, payload::text FROM relate_tracking.change WHERE id = ANY($1)"
}
