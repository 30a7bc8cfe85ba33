/// ``LiveResults`` of a generated type: the same live answer, its objects typed.
///
/// ```swift
/// let hoppers = try context.liveFetch(Person.self, where: { $0.surname == "Hopper" }, orderBy: { [$0.firstname.ascending] })
/// for person in try hoppers.objects { print(try person.firstname ?? "") }
/// ```
///
/// Observation goes through the untyped results: reading ``objects`` inside
/// `withObservationTracking` registers the answer as ``LiveResults/objects`` does.
public struct TypedLiveResults<Object: TypedObject> {
    /// The untyped live answer beneath.
    public let results: LiveResults

    /// Wraps `results`, whose request is of `Object`'s entity.
    ///
    /// - Parameter results: live results of a request on `Object.entity`.
    init(_ results: LiveResults) {
        self.results = results
    }

    /// The request's answer now, typed (see ``LiveResults/objects``).
    ///
    /// - Throws: ``RelateError`` when the answer cannot be read again.
    public var objects: [Object] {
        get throws { Object.viewing(try results.objects) }
    }

    /// What the last update changed (see ``LiveResults/lastDifference``).
    public var lastDifference: LiveResults.Difference { results.lastDifference }
}

@available(*, unavailable, message: "live results belong to their DatabaseContext, which is not thread-safe")
extension TypedLiveResults: Sendable {}

extension DatabaseContext {
    /// The objects of a generated type that meet a condition, as a live answer that stays
    /// current (see ``liveFetch(_:)``).
    ///
    /// ```swift
    /// let sailors = try context.liveFetch(Person.self, where: { $0.email.any { $0.address.hasSuffix("@navy.mil") } })
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - condition: a condition on its columns (all objects when `nil`).
    ///   - orderBy: sort keys from its columns.
    ///   - limit: at most this many.
    ///   - offset: skipping this many first.
    /// - Returns: the live answer, read now with one query.
    /// - Throws: `RelateError` (`.schemaChanged` when the type no longer matches the model).
    public func liveFetch<Object: TypedObject>(
        _ type: Object.Type, where condition: ((Object.Columns) -> Condition)? = nil,
        orderBy: ((Object.Columns) -> [Ordering])? = nil, limit: Int? = nil, offset: Int? = nil
    ) throws -> TypedLiveResults<Object> {
        try check(Object.entity)
        return TypedLiveResults(try liveFetch(FetchRequest(Object.self, where: condition, orderBy: orderBy, limit: limit, offset: offset)))
    }
}
