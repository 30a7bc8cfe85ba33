import BenchmarkFixtures
import FluentKit
import Foundation

/// `bench_insert.reading`: the five typed columns, the key given by the user.
final class FluentReading: Model, @unchecked Sendable {
    static let space: String? = "bench_insert"
    static let schema = "reading"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "amount") var amount: Double
    @Field(key: "active") var active: Bool
    @Field(key: "created") var created: Date

    init() {}

    init(_ reading: Reading) {
        id = reading.id
        name = reading.name
        amount = reading.amount
        active = reading.active
        created = reading.created
    }
}

/// `bench_setupdate.account`.
final class FluentAccount: Model, @unchecked Sendable {
    static let space: String? = "bench_setupdate"
    static let schema = "account"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "balance") var balance: Int
    @Field(key: "stamp") var stamp: Int

    init() {}
}

/// `bench_setdelete.parent` (its children go by the foreign key's `ON DELETE CASCADE`).
final class FluentWriteParent: Model, @unchecked Sendable {
    static let space: String? = "bench_setdelete"
    static let schema = "parent"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String

    init() {}
}
