import FluentKit
import Foundation

/// `bench_m2m.owner`, its targets through `@Siblings`.
final class FluentOwner: Model, @unchecked Sendable {
    static let space: String? = "bench_m2m"
    static let schema = "owner"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Siblings(through: FluentOwnerTarget.self, from: \.$owner, to: \.$target) var targets: [FluentTarget]

    init() {}
}

/// `bench_m2m.target`.
final class FluentTarget: Model, @unchecked Sendable {
    static let space: String? = "bench_m2m"
    static let schema = "target"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String

    init() {}
}

/// The pivot, as Fluent's documentation models one: a key of its own (a UUID made by the
/// client) and a parent on each side. Fluent inserts pivots with `RETURNING id`, so it
/// cannot write `bench_m2m.owner_target`, whose key is the pair; it writes
/// `bench_m2m_fluent.owner_target`, the same pairs (unique, both foreign keys) plus that
/// key, in a schema of its own so that Relate's model of `bench_m2m` stays as it was.
final class FluentOwnerTarget: Model, @unchecked Sendable {
    static let space: String? = "bench_m2m_fluent"
    static let schema = "owner_target"

    @ID(key: .id) var id: UUID?
    @Parent(key: "owner_id") var owner: FluentOwner
    @Parent(key: "target_id") var target: FluentTarget

    init() {}
}
