import RelatePostgres

/// A source of other clients' committed changes, read by a context at the points it
/// chooses: NOTIFY from Relate's triggers, or a logical decoding stream. Each owns a
/// connection of its own, opened with the context's parameters, so that losing it (a
/// restart, `pg_terminate_backend`) costs the feed, never the context.
protocol ChangeFeed: AnyObject {
    var mechanism: ChangeTracking.Mechanism { get }
    /// How far in the server's log the feed has read (a logical decoding stream); `nil`
    /// for a feed that reads no log position (triggers' notifications).
    var position: LSN? { get }
    /// What arrived since the last call, without waiting; committed transactions only, whole.
    func receive() throws -> [FeedEvent]
    /// Waits at most `timeout` for something to read.
    func waitForInput(timeout: Duration) throws
}

enum FeedEvent {
    /// One committed transaction's changes (triggers: a notification's statements).
    /// `unconfirmed`: the transaction's id (32 bits) when a logical feed handed it over
    /// before a snapshot was seen to see it (``makeChangeFeed(on:layout:mechanism:confirmingVisibility:)``):
    /// whoever reads because of it must first confirm that it is visible.
    case changes([ChangeNotice], unconfirmed: UInt32? = nil)
    /// The feed lost its connection and opened a new one: whatever was committed in
    /// between is unknown, so everything in memory must be read again.
    case gap
    /// A table's definition changed since the model was read. Schema and table apart: either
    /// may hold a dot.
    case schemaChanged(schema: String, table: String, what: String)
    /// Another context took or let go of edit marks (see ``DatabaseContext/marksEdits``).
    case editMarks
}

/// One change as a feed read it: a table by name, keys in the server's text form.
struct ChangeNotice {
    var schema: String
    var table: String
    var kind: Change.Kind
    /// The rows' primary keys; `nil` when they are not known (a table without a primary key,
    /// a truncate): the table is then read again whole.
    var keys: [[String?]]?
    /// An update's keys before, when they changed.
    var oldKeys: [[String?]]?
    /// For an update of one row, the columns whose values it changed, when the feed knows
    /// them for every column the model has (generated ones apart); `nil` when it does not.
    var changedColumns: [String]? = nil
    /// For an update of one row whose changed columns the feed does not know (under
    /// logical decoding's default replica identity, an update of a row the feed did not
    /// keep a version of): the row after it. A live query compares the columns its policies
    /// read with what a sweep found of them before (``ObservationHub``).
    var newRow: RowAfter? = nil
}

/// An updated row's values after the update (``ChangeNotice/newRow``), and where its
/// transaction's commit ended in the log.
struct RowAfter: Sendable {
    /// By column, as text (`nil`: SQL `NULL`); a value the update left TOASTed and
    /// unchanged, or sent in binary, is missing.
    var values: [String: String?]
    /// The end of the commit record: a snapshot taken when the log's insert position was
    /// at or before it did not see the transaction.
    var committed = LSN.zero
}

/// A feed of the mechanism asked for (`nil`: the triggers when installed, else logical
/// decoding when its publication exists) for a model, beside `connection`.
///
/// With `confirmingVisibility` false, a logical feed hands each transaction over as soon as
/// its commit arrives, with its id (``FeedEvent/changes(_:unconfirmed:)``), for a consumer
/// that confirms the visibility in its own next round trip (the live queries' hub); by
/// default it holds it until a snapshot of its own sees it. Triggers notify once a
/// transaction is visible either way.
func makeChangeFeed(
    on connection: Connection, layout: ModelLayout, mechanism: ChangeTracking.Mechanism?, confirmingVisibility: Bool = true
) throws -> any ChangeFeed {
    let installed = (
        triggers: try ChangeTracking.isEnabled(on: connection),
        logical: try ChangeTracking.isEnabled(logicalDecodingOn: connection))
    switch mechanism ?? (installed.triggers || !installed.logical ? .triggers : .logicalDecoding) {
    case .triggers:
        guard installed.triggers else {
            throw RelateError(
                kind: .invalidRequest,
                message: "change tracking is not enabled in this database: run `relate enable <url> --schema <schema>` "
                    + "(or ChangeTracking.enable(on:schemas:)) once, as a user who may create triggers, "
                    + "or `relate enable --logical` for logical decoding")
        }
        return try NotificationFeed(main: connection, layout: layout)
    case .logicalDecoding:
        guard installed.logical else {
            throw RelateError(
                kind: .invalidRequest,
                message: "logical decoding is not enabled in this database: run `relate enable --logical <url> --schema <schema>` "
                    + "(or ChangeTracking.enable(logicalDecodingOn:schemas:)) once")
        }
        return try LogicalDecodingFeed(main: connection, layout: layout, confirmingVisibility: confirmingVisibility)
    }
}
