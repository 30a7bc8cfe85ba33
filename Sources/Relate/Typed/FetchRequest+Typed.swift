extension FetchRequest {
    /// A request for the objects of a generated type, its condition and sort order built
    /// from the type's columns: what typed `fetch`, `count` and `liveFetch` send, and a value
    /// to keep, pass to another context or observe.
    ///
    /// ```swift
    /// let request = FetchRequest(Person.self, where: { $0.surname == "Hopper" }, orderBy: { [$0.firstname.ascending] })
    /// let stream = try await database.observe(request)
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - condition: a condition on its columns (all objects when `nil`).
    ///   - orderBy: sort keys from its columns.
    ///   - limit: at most this many.
    ///   - offset: skipping this many first.
    @inlinable
    public init<Object: TypedObject>(
        _ type: Object.Type, where condition: ((Object.Columns) -> Condition)? = nil,
        orderBy: ((Object.Columns) -> [Ordering])? = nil, limit: Int? = nil, offset: Int? = nil
    ) {
        let columns = Object.Columns(prefix: "")
        self.init(
            Object.entity.name, where: condition.map { $0(columns) }, orderBy: orderBy.map { $0(columns) } ?? [], limit: limit,
            offset: offset)
    }
}
