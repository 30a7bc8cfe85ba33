import FluentKit

/// `bench_update.item` as a Fluent model.
final class FluentItem: Model, @unchecked Sendable {
    static let space: String? = "bench_update"
    static let schema = "item"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "hits") var hits: Int

    init() {}
}
