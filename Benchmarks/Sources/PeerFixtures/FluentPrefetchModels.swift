import FluentKit

/// `bench_prefetch.parent` as a Fluent model, its children through `@Children`.
final class FluentParent: Model, @unchecked Sendable {
    static let space: String? = "bench_prefetch"
    static let schema = "parent"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Children(for: \.$parent) var children: [FluentChild]

    init() {}
}

/// `bench_prefetch.child`, its parent through `@Parent`.
final class FluentChild: Model, @unchecked Sendable {
    static let space: String? = "bench_prefetch"
    static let schema = "child"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Parent(key: "parent_id") var parent: FluentParent
    @Field(key: "name") var name: String
    @Field(key: "amount") var amount: Double

    init() {}
}
