import Foundation
import RelatePostgres

/// An attribute's value as an object keeps it. The Swift types of DESIGN's mapping are held
/// unboxed, so that a row costs no allocation per cell (beyond a long `String`'s) and
/// copying or freeing a cell needs no value-witness call; arrays and the rare rest are boxed.
/// 24 bytes a cell. Inlinable (with the object's typed read), so that a read knows its case.
@usableFromInline
enum StoredValue {
    case null
    case integer(Int)
    case double(Double)
    case float(Float)
    case bool(Bool)
    case string(String)
    case date(Date)
    case uuid(UUID)
    case data(Data)
    case decimal(Decimal)
    case other(Boxed)

    @usableFromInline
    final class Boxed: Sendable {
        @usableFromInline let value: any Sendable
        init(_ value: any Sendable) { self.value = value }
    }

    /// Any Swift value ``PostgresValue`` answers, stored.
    init(_ value: (any Sendable)?) {
        switch value {
        case nil: self = .null
        case let value as Int: self = .integer(value)
        case let value as Double: self = .double(value)
        case let value as Float: self = .float(value)
        case let value as Bool: self = .bool(value)
        case let value as String: self = .string(value)
        case let value as Date: self = .date(value)
        case let value as UUID: self = .uuid(value)
        case let value as Data: self = .data(value)
        case let value as Decimal: self = .decimal(value)
        case let value?: self = .other(Boxed(value))
        }
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as ``DatabaseObject/value(forKey:)`` answers it.
    @inline(__always)
    var value: (any Sendable)? {
        switch self {
        case .null: nil
        case .integer(let value): value
        case .double(let value): value
        case .float(let value): value
        case .bool(let value): value
        case .string(let value): value
        case .date(let value): value
        case .uuid(let value): value
        case .data(let value): value
        case .decimal(let value): value
        case .other(let box): box.value
        }
    }

    /// The value bound as a statement parameter (a key in a `WHERE`, say).
    var parameter: (any PostgresEncodable)? {
        switch self {
        case .null: nil
        case .integer(let value): value
        case .double(let value): value
        case .float(let value): value
        case .bool(let value): value
        case .string(let value): value
        case .date(let value): value
        case .uuid(let value): value
        case .data(let value): value
        case .decimal(let value): value
        case .other(let box): box.value as? any PostgresEncodable
        }
    }

    /// How a result column is read into a ``StoredValue``: chosen once per result from the
    /// column's type, so that each cell is one typed decode.
    enum Reader {
        case integer, double, float, bool, string, date, uuid, data, decimal, dynamic

        init(_ type: PostgresType) {
            switch type {
            case .int2, .int4, .int8, .oid: self = .integer
            case .float8: self = .double
            case .float4: self = .float
            case .bool: self = .bool
            case .text, .varchar, .bpchar, .name, .char, .json, .jsonb, .xml, .unknown: self = .string
            case .date, .timestamp, .timestamptz: self = .date
            case .uuid: self = .uuid
            case .bytea: self = .data
            case .numeric: self = .decimal
            default: self = .dynamic
            }
        }

        static func readers(for result: PostgresResult) -> [Reader] {
            result.columns.map { Reader($0.type) }
        }

        @inline(__always)
        func read(_ row: PostgresRow, at column: Int) throws -> StoredValue {
            switch self {
            case .integer: try row.decode(Int?.self, at: column).map(StoredValue.integer) ?? .null
            case .double: try row.decode(Double?.self, at: column).map(StoredValue.double) ?? .null
            case .float: try row.decode(Float?.self, at: column).map(StoredValue.float) ?? .null
            case .bool: try row.decode(Bool?.self, at: column).map(StoredValue.bool) ?? .null
            case .string: try row.decode(String?.self, at: column).map(StoredValue.string) ?? .null
            case .date: try row.decode(Date?.self, at: column).map(StoredValue.date) ?? .null
            case .uuid: try row.decode(UUID?.self, at: column).map(StoredValue.uuid) ?? .null
            case .data: try row.decode(Data?.self, at: column).map(StoredValue.data) ?? .null
            case .decimal: try row.decode(Decimal?.self, at: column).map(StoredValue.decimal) ?? .null
            case .dynamic: StoredValue(try row.value(at: column))
            }
        }
    }
}

extension StoredValue: CustomStringConvertible {
    @usableFromInline var description: String {
        value.map { "\($0)" } ?? "NULL"
    }
}

/// The attribute values of the objects made from one result, row after row: each object
/// owns `width` consecutive cells. One allocation for a whole fetch instead of one per
/// object, with consecutive rows side by side in memory. The identity map keeps a fetch's
/// objects together until `reset()`, so the storage seldom outlives most of its objects.
@usableFromInline
final class ValueStorage {
    /// Only ever touched by the context's one thread, never in overlapping accesses.
    @exclusivity(unchecked) @usableFromInline var cells: ContiguousArray<StoredValue> = []

    init(capacity: Int) {
        cells.reserveCapacity(capacity)
    }
}

/// One object's attribute values: a window on its cells.
struct ObjectValues: RandomAccessCollection, CustomStringConvertible {
    let storage: ValueStorage
    let base: Int
    let count: Int

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    @inline(__always)
    subscript(index: Int) -> StoredValue {
        storage.cells[base + index]
    }

    var description: String { Array(self).description }
}
