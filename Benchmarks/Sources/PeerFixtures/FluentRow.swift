import FluentKit

/// A row of `bench_fetch.rows` as a Fluent model. The key is the table's own `i`, given by
/// the user (not generated).
final class FluentRow: Model, @unchecked Sendable {
    static let space: String? = "bench_fetch"
    static let schema = "rows"

    @ID(custom: "i", generatedBy: .user) var id: Int?
    @Field(key: "t") var t: String
    @Field(key: "f") var f: Double
    @Field(key: "b") var b: Bool
    @Field(key: "l") var l: Int

    init() {}
}
