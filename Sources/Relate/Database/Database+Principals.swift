extension Database {
    /// ``read(_:)`` as `principal`, for row-level security: one transaction, `BEGIN READ
    /// ONLY` (on a replica too) sent in the same pipeline as the principal's role and
    /// settings (`set_config(…, true)`, every name and value bound).
    ///
    /// ```swift
    /// let tenant = Principal(role: "app_user", settings: ["app.tenant": "42"])
    /// let titles = try await database.read(as: tenant) { context in
    ///     try context.fetch("document").map { try $0.value(forKey: "title", as: String.self) }
    /// }
    /// ```
    ///
    /// Fails closed: a role the login role may not take, or a setting that cannot be made,
    /// throws and `body` never runs; the unit never falls back to the pool's role. Whatever
    /// way the unit ends, its connection goes back to the pool as the login role with no
    /// setting (both end with the transaction; a connection whose transaction could not be
    /// ended is closed, never reused).
    ///
    /// - Parameters:
    ///   - principal: Who the unit runs as.
    ///   - body: The unit's work, given a fresh context; it may run more than once when a
    ///     replica is lost under it (as ``read(_:)``).
    /// - Returns: What `body` returned.
    /// - Throws: A ``RelateError`` when the role cannot be taken or a setting made (with
    ///   the server's SQLSTATE, `42501` for a role the login role is not a member of), or of
    ///   kind ``RelateError/Kind-swift.struct/invalidRequest`` for a role of `none` or a
    ///   setting named `role`; otherwise what ``read(_:)`` throws.
    public func read<Result: Sendable>(as principal: Principal,
        _ body: @escaping @Sendable (DatabaseContext) throws -> Result
    ) async throws -> Result {
        try await run(UnitOfWork(.read, as: principal), body)
    }

    /// ``write(_:)`` as `principal`, for row-level security: its transaction begins in the
    /// same pipeline as the principal's role and settings (`set_config(…, true)`, every
    /// name and value bound), so policies' `WITH CHECK` and `USING` see them from the first
    /// statement.
    ///
    /// ```swift
    /// try await database.write(as: Principal(role: "app_user", settings: ["app.tenant": "42"])) { context in
    ///     try context.insert("document", values: ["tenant": 42, "title": "Minutes"])
    /// }
    /// ```
    ///
    /// Fails closed as ``read(as:_:)`` does, and gives its connection back as the login
    /// role with no setting whether it committed, threw, was cancelled or lost its
    /// connection during `COMMIT`.
    ///
    /// - Parameters:
    ///   - principal: Who the unit runs as.
    ///   - body: The unit of work, given a context of its own, in a transaction.
    /// - Returns: What `body` returns, once the transaction committed.
    /// - Throws: A ``RelateError`` when the role cannot be taken or a setting made (`body`
    ///   never ran), or of kind ``RelateError/Kind-swift.struct/invalidRequest`` for a role
    ///   of `none` or a setting named `role`; otherwise what ``write(_:)`` throws.
    @discardableResult
    public func write<Result: Sendable>(as principal: Principal,
        _ body: @escaping @Sendable (DatabaseContext) throws -> Result
    ) async throws -> Result {
        try await run(UnitOfWork(.write, as: principal), body)
    }
}
