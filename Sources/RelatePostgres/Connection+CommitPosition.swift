import CLibPQ

extension Connection {
    /// `COMMIT` and `SELECT pg_current_wal_insert_lsn()` in one pipeline: the commit's
    /// position in the log is known with no round trip more. The position is read after the
    /// commit, so it is at or past the end of the commit's record.
    func commitLearningPosition() throws {
        lastCommitPosition = nil
        let results: [PostgresResult]
        do {
            results = try sendWithoutTrace(
                [PostgresStatement("COMMIT"), PostgresStatement("SELECT pg_current_wal_insert_lsn()::text")])
        } catch var error as PostgresError {
            // The commit went through, only the question after it failed (a server in
            // recovery): the commit stands, its position stays unknown.
            if error.statementIndex == 1, error.kind != .connectionClosed { return }
            error.statementIndex = nil
            throw error
        }
        if results.count == 2, let text = try? results[1][0].decode(String.self, at: 0) {
            lastCommitPosition = LSN(text)
        }
    }

    /// Where the server's log has been replayed to (`pg_last_wal_replay_lsn()`), on a
    /// replica; `nil` on a server that is not in recovery (a primary).
    ///
    /// - Returns: the replayed position, or `nil` on a primary.
    /// - Throws: ``PostgresError`` when the query fails (the connection is lost).
    public func replayedPosition() throws -> LSN? {
        let text = try query("SELECT pg_last_wal_replay_lsn()::text")[0].decode(String?.self, at: 0)
        return text.flatMap(LSN.init)
    }
}
