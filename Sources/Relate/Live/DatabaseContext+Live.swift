extension DatabaseContext {
    /// The request's objects now, as ``LiveResults`` that stay the request's answer after
    /// every write of this context and every ``processChanges()`` that touches what the
    /// request reads.
    ///
    /// ```swift
    /// let sailors = try context.liveFetch(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))))
    /// ```
    ///
    /// - Parameter request: what to fetch; its region (the entities its condition, joins
    ///   and sort order read) decides which changes make the answer stale.
    /// - Returns: the live answer, read now with one query.
    /// - Throws: ``RelateError`` when the request names an unknown entity or key, or the
    ///   query fails.
    public func liveFetch(_ request: FetchRequest) throws -> LiveResults {
        let region = try request.region(in: layout)
        let live = LiveResults(request: request, context: self, objects: try fetch(request))
        graph.watch(live, region: region)
        return live
    }
}
