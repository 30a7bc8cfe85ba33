import Testing

@testable import Relate
@testable import RelatePostgres

/// The key lists of `= ANY($1)`: typed as the column is, so the server plans as for the
/// column's own type.
@Suite struct KeyListTests {
    @Test func integerKeysTakeTheColumnsIntegerType() throws {
        let keys: [StoredValue] = [.integer(1), .integer(2)]
        #expect(AttributeValue.array(keys, columnType: .int4).parameter as? [Int32] == [1, 2])
        #expect(AttributeValue.array(keys, columnType: .int2).parameter as? [Int16] == [1, 2])
        #expect(AttributeValue.array(keys, columnType: .int8).parameter as? [Int] == [1, 2])
        // A key from a wider column that the column cannot hold: the list stays int8[].
        #expect(AttributeValue.array([.integer(1), .integer(5_000_000_000)], columnType: .int4).parameter as? [Int] == [1, 5_000_000_000])
        let (strings, asText) = AttributeValue.array([.string("a"), .string("b")], columnType: .text)
        #expect(strings as? [String] == ["a", "b"] && !asText)
        let (mixed, mixedAsText) = AttributeValue.array([.integer(1), .string("b")], columnType: .text)
        #expect(mixed as? [String] == ["1", "b"] && mixedAsText)
    }

    @Test func theConditionNamesEachColumn() throws {
        let (single, _) = DatabaseContext.keyCondition(["\"id\""], types: [.int4], [[.integer(4)]])
        #expect(single == #""id" = $1"#)
        let (list, parameters) = DatabaseContext.keyCondition(["\"id\""], types: [.int4], [[.integer(4)], [.integer(5)]])
        #expect(list == #""id" = ANY($1)"#)
        #expect(parameters.first.flatMap { $0 as? [Int32] } == [4, 5])
        let (pairs, _) = DatabaseContext.keyCondition(["\"a\"", "\"b\""], types: [.int8, .text], [[.integer(1), .string("x")], [.integer(2), .string("y")]])
        #expect(pairs == #"("a", "b") IN (SELECT * FROM unnest($1, $2))"#)
    }
}
