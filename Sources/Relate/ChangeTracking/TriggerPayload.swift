/// A payload of Relate's triggers, `{"x": transaction, "r": table oid, "s": schema, "t":
/// table, "k": "I"|"U"|"D"|"T", "keys": […], "old": […], "c": […], "n": count}` (a
/// truncate, `T`, without keys), or a stored one's notice (`"id"` in place of the keys), or `{"ddl": 1}`: every field a listener
/// uses, each `nil` when it is missing or of another type. Anyone who may connect may
/// `NOTIFY`, so a field is a hint, read once (``init(json:)``) and never trusted further.
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

    /// Reads the payloads of `relate_tracking.change` whose ids are `$1`. Prepared: planning
    /// it at each run cost the server about 80 µs of its 150 (`pgbench -M extended` against
    /// `-M prepared`). Taking the JSON apart in the query instead, so that the listener would
    /// parse none, cost the server more than it saved the listener (+100 µs a run, against
    /// about 30 µs).
    static let storedSQL = "SELECT id, payload::text FROM relate_tracking.change WHERE id = ANY($1)"
}
