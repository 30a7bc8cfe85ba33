import Testing

@testable import Relate

/// The operation and table a span is named after (OpenTelemetry's `"<operation> <table>"`),
/// read from SQL as Relate and people write it.
@Suite struct StatementSummaryTests {
    @Test(arguments: [
        ("SELECT \"t0\".\"id\" FROM \"public\".\"person\" AS \"t0\" WHERE \"t0\".\"id\" = $1", "SELECT", "public.person"),
        ("select id from person where surname = $1", "SELECT", "person"),
        ("SELECT count(*) FROM (SELECT 1 FROM \"s\".\"email\") page", "SELECT", nil),
        ("SELECT (SELECT max(id) FROM other) FROM main_table", "SELECT", "main_table"),
        ("SELECT 'FROM decoy' AS x FROM \"we\"\"ird\"", "SELECT", "we\"ird"),
        ("SELECT txid_current_if_assigned()", "SELECT", nil),
        ("INSERT INTO \"public\".\"email\" (\"address\") VALUES ($1) RETURNING *", "INSERT", "public.email"),
        ("UPDATE ONLY person SET surname = $1 WHERE id = $2", "UPDATE", "person"),
        ("DELETE FROM \"app\".\"document\" WHERE \"id\" = ANY($1)", "DELETE", "app.document"),
        ("WITH gone AS (DELETE FROM a RETURNING id) SELECT count(*) FROM gone", "SELECT", "gone"),
        ("  BEGIN READ ONLY", "BEGIN", nil),
        ("COMMIT", "COMMIT", nil),
        ("SET statement_timeout = 5000", "SET", nil),
    ] as [(String, String, String?)])
    func operationAndTable(_ sql: String, _ operation: String, _ table: String?) {
        let summary = StatementSummary(sql: sql)
        #expect(summary.operation == operation)
        #expect(summary.collection == table)
        #expect(summary.spanName == (table.map { "\(operation) \($0)" } ?? operation))
    }

    @Test func anEmptyStatementIsNamedAfterTheSystem() {
        #expect(StatementSummary(sql: "  ").spanName == "postgresql")
        #expect(StatementSummary(sql: "").operation == nil)
    }
}
