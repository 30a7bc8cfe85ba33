import Testing

@testable import Relate
@testable import RelatePostgres

/// The key lists of `= ANY($1)`: typed as the column is, so the server plans as for the
/// column's own type and its index serves the lookup.
@Suite struct KeyListTests {
    /// The condition ``SQLBuilder`` writes for `keys`, with the values it bound.
    func keyCondition(_ columns: [String], types: [PostgresType], _ keys: [[StoredValue]]) -> (String, [(any PostgresEncodable)?]) {
        var sql = SQLBuilder()
        let condition = sql.keyCondition(columns, types: types, keys)
        return (condition, sql.parameters)
    }

    @Test func integerKeysTakeTheColumnsIntegerType() throws {
        let keys: [StoredValue] = [.integer(1), .integer(2)]
        #expect(AttributeValue.keyList(keys, columnType: .int4).parameter as? [Int32] == [1, 2])
        #expect(AttributeValue.keyList(keys, columnType: .int2).parameter as? [Int16] == [1, 2])
        #expect(AttributeValue.keyList(keys, columnType: .int8).parameter as? [Int] == [1, 2])
        // A key from a wider column that the column cannot hold: the list stays int8[].
        #expect(AttributeValue.keyList([.integer(1), .integer(5_000_000_000)], columnType: .int4).parameter as? [Int] == [1, 5_000_000_000])
        #expect(AttributeValue.keyList([.string("a"), .string("b")], columnType: .text).parameter as? [String] == ["a", "b"])
        #expect(AttributeValue.keyList([.float(1.5), .float(2)], columnType: .float4).parameter as? [Float] == [1.5, 2])
    }

    /// A type without a Swift array (inet, an enum, citext: read as text) goes as an untyped
    /// array literal, which the server reads as the column's own array type — never as
    /// `column::text = ANY(…)`, which no index serves.
    @Test func keysOfTypesWithoutASwiftArrayGoAsAnUntypedLiteral() throws {
        let inet = PostgresType(869)
        let list = AttributeValue.keyList([.string("10.0.0.1"), .string("a \"b\"")], columnType: inet)
        guard case .literal(let text) = list else {
            Issue.record("expected a literal, got \(list)")
            return
        }
        #expect(text == #"{"10.0.0.1","a \"b\""}"#)
        #expect(type(of: list.parameter).postgresType == .unspecified)
        let (condition, _) = keyCondition(["\"address\""], types: [inet], [[.string("10.0.0.1")], [.string("10.0.0.2")]])
        #expect(condition == #""address" = ANY($1)"#)
    }

    @Test func theConditionNamesEachColumn() throws {
        let (single, _) = keyCondition(["\"id\""], types: [.int4], [[.integer(4)]])
        #expect(single == #""id" = $1"#)
        let (list, parameters) = keyCondition(["\"id\""], types: [.int4], [[.integer(4)], [.integer(5)]])
        #expect(list == #""id" = ANY($1)"#)
        #expect(parameters.first.flatMap { $0 as? [Int32] } == [4, 5])
        let (pairs, _) = keyCondition(["\"a\"", "\"b\""], types: [.int8, .text], [[.integer(1), .string("x")], [.integer(2), .string("y")]])
        #expect(pairs == #"("a", "b") IN (SELECT * FROM unnest($1, $2))"#)
        // A composite key with a column of a type without a Swift array: paired by text,
        // narrowed by the column's own index.
        let (mixed, mixedParameters) = keyCondition(
            ["\"a\"", "\"b\""], types: [.int8, PostgresType(869)], [[.integer(1), .string("10.0.0.1")], [.integer(2), .string("10.0.0.2")]])
        #expect(mixed == #"("a", "b"::text) IN (SELECT * FROM unnest($1, $2::text[])) AND "b" = ANY($3)"#)
        #expect(mixedParameters.count == 3)
    }
}
