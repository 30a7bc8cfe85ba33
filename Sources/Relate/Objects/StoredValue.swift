import Foundation
import RelatePostgres

/// An attribute's value as an object keeps it. The Swift types of DESIGN's mapping are held
/// unboxed, so that a row costs no allocation per cell (beyond a long `String`'s) and
/// copying or freeing a cell needs no value-witness call; arrays and the rare rest are boxed.
/// 24 bytes a cell. Inlinable (with the object's typed read), so that a read knows its case.
@usableFromInline
enum StoredValue: Sendable {
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

    /// A parameter of one of the scalar types of DESIGN's mapping, stored; `nil` for others.
    init?(scalar parameter: any PostgresEncodable) {
        guard let value = Self.scalar(parameter) else { return nil }
        self = value
    }

    /// The existential opened: its type compared with each scalar type, a pointer
    /// comparison, where a chain of `as?` casts cost a runtime cast each (1,800
    /// instructions for a `String`, the fifth).
    private static func scalar<Value: PostgresEncodable>(_ value: Value) -> StoredValue? {
        func `is`<Scalar>(_ type: Scalar.Type) -> Bool { Value.self == Scalar.self }
        // unsafeBitCast from a type to itself: the comparison above made sure.
        if `is`(String.self) { return .string(unsafeBitCast(value, to: String.self)) }
        if `is`(Int.self) { return .integer(unsafeBitCast(value, to: Int.self)) }
        if `is`(Double.self) { return .double(unsafeBitCast(value, to: Double.self)) }
        if `is`(Bool.self) { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if `is`(Float.self) { return .float(unsafeBitCast(value, to: Float.self)) }
        if `is`(Date.self) { return .date(unsafeBitCast(value, to: Date.self)) }
        if `is`(UUID.self) { return .uuid(unsafeBitCast(value, to: UUID.self)) }
        if `is`(Data.self) { return .data(unsafeBitCast(value, to: Data.self)) }
        if `is`(Decimal.self) { return .decimal(unsafeBitCast(value, to: Decimal.self)) }
        return nil
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as ``DatabaseObject/value(forKey:)`` answers it.
    @inlinable @inline(__always)
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

    /// The value bound as a statement parameter (a key in a `WHERE`, say). The same switch
    /// as `value`, on purpose: deriving either from the other costs a runtime cast or an
    /// existential conversion per cell (measured: 7 % of a 10,000-row replace, 8 % of a
    /// fetch read through `value(forKey:)`).
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

    /// The value's text form as PostgreSQL reads it, for an array literal.
    var arrayElementText: String {
        if case .string(let text) = self { return text }
        guard let value else { return "NULL" }
        if let element = value as? any PostgresArrayElement { return Self.elementText(element) }
        return "\(value)"
    }

    /// `element`'s text form as PostgreSQL reads it inside an array literal.
    static func elementText(_ element: any PostgresArrayElement) -> String {
        var bytes: [UInt8] = []
        element.encodeText(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How a result column is read into a ``StoredValue``: chosen once per result from the
    /// column's type, so that each cell is one switch and one typed decode.
    struct Reader {
        enum Kind {
            case integer, double, float, bool, string, date, uuid, data, decimal
            /// A type without a mapping, read in its text form (a `String`) or binary (`Data`).
            case dynamic
            /// A value of none of the cases above (an array, JSON, a time, an interval, an
            /// address, a range): boxed as read, without asking whether it is one of them.
            case boxed
            /// A composite column's record (`array`: an array of them), in binary.
            case record(array: Bool)
        }

        /// The binary forms a bulk read decodes in place, without the typed decoders'
        /// checks of type and form; a cell of another length takes the full path (and its error).
        enum Direct {
            case int2, int4, int8, float4, float8, bool, text, date, uuid, bytes, none
        }

        var kind: Kind
        let direct: Direct
        let type: PostgresType
        let format: PostgresFormat

        init(_ column: PostgresColumn) {
            type = column.type
            format = column.format
            switch column.type.mapping {
            case .integer: kind = .integer
            case .double: kind = .double
            case .float: kind = .float
            case .bool: kind = .bool
            case .string: kind = .string
            case .date: kind = .date
            case .uuid: kind = .uuid
            case .data: kind = .data
            case .decimal: kind = .decimal
            case .textForm: kind = .dynamic
            case .array, .json, .time, .interval, .inet, .macAddress, .range, .multirange: kind = .boxed
            }
            switch (kind, column.format, column.type) {
            case (.integer, .binary, .int2): direct = .int2
            case (.integer, .binary, .int4): direct = .int4
            case (.integer, .binary, .int8): direct = .int8
            case (.float, .binary, .float4): direct = .float4
            case (.double, .binary, .float8): direct = .float8
            case (.bool, .binary, .bool): direct = .bool
            case (.string, _, let type) where type.isTextual: direct = .text
            case (.date, .binary, .date), (.date, .binary, .timestamp), (.date, .binary, .timestamptz): direct = .date
            case (.uuid, .binary, .uuid): direct = .uuid
            case (.data, .binary, .bytea): direct = .bytes
            default: direct = .none
            }
        }

        static func readers(for result: PostgresResult) -> [Reader] {
            result.columns.map(Reader.init)
        }

        /// The readers of a result whose first columns are `entity`'s attributes: those of a
        /// composite type read as records (their OIDs are the database's own, which no
        /// static mapping knows).
        static func readers(for result: PostgresResult, entity: Entity) -> [Reader] {
            var readers = readers(for: result)
            for (index, attribute) in entity.attributes.enumerated() where attribute.composite != nil && index < readers.count {
                if readers[index].format == .binary { readers[index].kind = .record(array: attribute.type.hasSuffix("[]")) }
            }
            return readers
        }

        @inline(__always)
        func read(_ row: PostgresRow, at column: Int) throws -> StoredValue {
            try read(row.result, row: row.index, column: column)
        }

        /// ``read(_:row:column:)`` for a loop over many rows: the forms ``readRaw(_:row:column:)``
        /// takes decoded as there (without the typed decoders' checks of type and form), the
        /// rest as ``read(_:row:column:)`` reads them.
        @inline(__always)
        func readDirect(_ result: PostgresResult, row: Int, column: Int) throws -> StoredValue {
            readsRaw ? try readRaw(result, row: row, column: column).value : try read(result, row: row, column: column)
        }

        /// Whether the column's cells can be raw cells (see ``RawCell``).
        var readsRaw: Bool { direct != .none }

        /// The cell as a ``RawCell``, for a column that ``readsRaw``; a cell the forms read
        /// here do not take (a value of another length) throws the full read's error.
        @inline(__always)
        func readRaw(_ result: PostgresResult, row: Int, column: Int) throws -> RawCell {
            guard let bytes = try result.cell(row: row, column: column) else { return RawCell() }
            switch direct {
            case .int4 where bytes.count == 4: return RawCell(integer: Int(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self))))
            case .int8 where bytes.count == 8: return RawCell(integer: Int(Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))))
            case .float8 where bytes.count == 8: return RawCell(double: Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))))
            case .bool where bytes.count == 1 && bytes[0] <= 1: return RawCell(bool: bytes[0] == 1)
            case .text where bytes.count <= Int(UInt32.max): return RawCell(.text, at: bytes)
            case .int2 where bytes.count == 2: return RawCell(integer: Int(Int16(bigEndian: bytes.loadUnaligned(as: Int16.self))))
            case .float4 where bytes.count == 4: return RawCell(float: Float(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))))
            case .date: return RawCell(date: try Date.decode(from: bytes, type: type, format: format))
            case .uuid where bytes.count == 16: return RawCell(.uuid, at: bytes)
            case .bytes where bytes.count <= Int(UInt32.max): return RawCell(.bytes, at: bytes)
            default:
                // The typed decoders refuse what the cases above do: this throws their error.
                let value = try read(result, row: row, column: column)
                throw PostgresDecodingError("a \(type) value read as \(value.value.map { "\(Swift.type(of: $0))" } ?? "NULL") but not in place")
            }
        }

        @inline(__always)
        func read(_ result: PostgresResult, row: Int, column: Int) throws -> StoredValue {
            guard let bytes = try result.cell(row: row, column: column) else { return .null }
            do {
                switch kind {
                case .integer: return .integer(try Int.decode(from: bytes, type: type, format: format))
                case .double: return .double(try Double.decode(from: bytes, type: type, format: format))
                case .float: return .float(try Float.decode(from: bytes, type: type, format: format))
                case .bool: return .bool(try Bool.decode(from: bytes, type: type, format: format))
                case .string: return .string(try String.decode(from: bytes, type: type, format: format))
                case .date: return .date(try Date.decode(from: bytes, type: type, format: format))
                case .uuid: return .uuid(try UUID.decode(from: bytes, type: type, format: format))
                case .data: return .data(try Data.decode(from: bytes, type: type, format: format))
                case .decimal: return .decimal(try Decimal.decode(from: bytes, type: type, format: format))
                case .dynamic: return StoredValue(try PostgresValue.decode(from: bytes, type: type, format: format))
                // Each of these decodes to a type of its own, never a case of its own: a cast
                // to each case first cost a failed dynamic cast apiece, 8 % of a fetch of such columns.
                case .boxed: return .other(Boxed(try PostgresValue.decode(from: bytes, type: type, format: format)))
                case .record(array: false): return .other(Boxed(try PostgresRecord.decodeRecord(bytes, type: type)))
                case .record(array: true): return .other(Boxed(try PostgresRecord.decodeArray(bytes, type: type)))
                }
            } catch {
                // A value its Swift type cannot hold exactly (a numeric past Decimal, a JSON
                // document with such a number) is held as its text, which goes back to the
                // column as the same value: a fetch of its table, or a write that answers
                // its row, must not fail for it (a write would have committed all the same).
                if let text = PostgresValue.textOfValueNotHeld(from: bytes, type: type, format: format) { return .string(text) }
                // The row's own reading of the cell fails the same way, with an error that
                // names the column, its type and the statement.
                _ = try result[row].value(at: column)
                throw error
            }
        }
    }
}

extension StoredValue {
    /// The value as a `Value` without boxing it, when the stored case holds one: `.some(nil)`
    /// for NULL, `.some(value)` for a match, `nil` when the value must take the slow path
    /// (another type). Inlined into the typed reads, so that where `Value` is known the cast
    /// is a check of the stored case, or of a boxed value's type against `Value`'s: on the
    /// slow path, unspecialized, the cast of a value of a type of its own (a range, JSON, a
    /// record) made `Value?`'s metadata at each read (a tenth of `RelateProfile types-fetch`).
    @inlinable @inline(__always)
    func unboxed<Value>(as type: Value.Type) -> Value?? {
        switch self {
        case .null: return .some(nil)
        case .integer(let value): if let value = value as? Value { return .some(value) }
        case .double(let value): if let value = value as? Value { return .some(value) }
        case .float(let value): if let value = value as? Value { return .some(value) }
        case .bool(let value): if let value = value as? Value { return .some(value) }
        case .string(let value): if let value = value as? Value { return .some(value) }
        case .date(let value): if let value = value as? Value { return .some(value) }
        case .uuid(let value): if let value = value as? Value { return .some(value) }
        case .data(let value): if let value = value as? Value { return .some(value) }
        case .decimal(let value): if let value = value as? Value { return .some(value) }
        case .other(let boxed): if let value = boxed.value as? Value { return .some(value) }
        }
        return nil
    }

    /// Whether two values are the same value (NULL is the same as NULL here).
    func isSame(as other: StoredValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        // The same case, compared as itself: no key made, nothing boxed (a save compares
        // every changed column with what memory held).
        case (.integer(let left), .integer(let right)): return left == right
        // By their bytes, as the server compares text: Swift's `==` takes a composed and a
        // decomposed `é` for one, and a write of the one over the other was dropped.
        case (.string(let left), .string(let right)): return left.hasSameBytes(as: right)
        case (.bool(let left), .bool(let right)): return left == right
        case (.double(let left), .double(let right)): return left == right
        case (.date(let left), .date(let right)): return left == right
        case (.uuid(let left), .uuid(let right)): return left == right
        case (.decimal(let left), .decimal(let right)): return left == right
        case (.data(let left), .data(let right)): return left == right
        default:
            // As keys are told apart: boxed values (arrays, JSON, ranges, composites) as the
            // server receives them, the same type, form and bytes (``ObjectKey``). Their own
            // `==` compares the texts inside by Swift's `==`, which took a decomposed `é`
            // written over a composed one for no change. Each encodes one way (a JSON
            // object's members sorted by key), so a value equal to the server but sent
            // otherwise (`-0` and `0` in an array) counts as changed, never the reverse.
            if let left = ObjectKey(self), let right = ObjectKey(other) { return left == right }
            return "\(self)" == "\(other)"
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
    /// The entity of the objects whose values these are (one result, one entity).
    @usableFromInline let table: EntityTable
    /// Only ever touched by the context's one thread, never in overlapping accesses.
    @exclusivity(unchecked) @usableFromInline var cells: ContiguousArray<StoredValue> = []
    /// The values of a fetch whose columns are all of the forms ``RawCell`` holds, instead
    /// of `cells` (which is then empty): numbers, bools and dates decoded, texts, UUIDs and
    /// bytes as where they lie in `result`. Such cells hold nothing to retain or free (a
    /// fetch's storage is freed at once, without a destroy per cell or a release per text),
    /// and a text becomes a `String` only when it is read.
    @exclusivity(unchecked) @usableFromInline var rawCells = RawCells()
    /// The result whose memory `rawCells`' texts point into, kept as long as they are.
    /// `nil` for storage of `cells`.
    @exclusivity(unchecked) @usableFromInline var result: PostgresResult?
    /// How many objects were made with their values here since the cells were last
    /// replaced: when that many are spares, nothing can read the values any more (see
    /// ``ObjectRegistry/removeAll(keepingSpares:)``).
    @exclusivity(unchecked) var objectsMade = 0

    deinit { rawCells.removeAll(keepingCapacity: false) }

    init(table: EntityTable, capacity: Int) {
        self.table = table
        cells.reserveCapacity(capacity)
    }

    /// Storage of raw cells over `result` (see ``rawCells``).
    init(table: EntityTable, result: PostgresResult) {
        self.table = table
        self.result = result
    }

    /// Lets go of every value and of the result, as nothing reads them any more; keeping
    /// the cells' memory for the next values when `keepingCapacity`.
    func empty(keepingCapacity: Bool) {
        cells.removeAll(keepingCapacity: keepingCapacity)
        rawCells.removeAll(keepingCapacity: keepingCapacity)
        result = nil
        objectsMade = 0
    }

    /// How many cells the storage has room for.
    var capacity: Int { cells.capacity + rawCells.capacity }

    /// Lets go of raw cells and their result: the storage holds `cells` from now on.
    func dropRawCells() {
        guard isRaw || rawCells.capacity > 0 else { return }
        rawCells.removeAll(keepingCapacity: false)
        result = nil
    }

    /// Whether the values are `rawCells`.
    @inlinable var isRaw: Bool { result != nil }

    /// The value at `column` of the object whose values start at `base`.
    @inlinable @inline(__always)
    func value(base: Int, column: Int) -> StoredValue {
        isRaw ? rawCells[base + column].value : cells[base + column]
    }

    /// Replaces the cells with `count` new ones, which `write` initializes in order at the
    /// pointer, counting them in `written`. Storage with room for them (a walk's batch
    /// before) takes them in its memory; else they go to a new allocation. When `write`
    /// throws, the cells are those written so far.
    func replaceCells(
        count: Int, _ write: (_ cells: UnsafeMutablePointer<StoredValue>, _ written: inout Int) throws -> Void
    ) throws {
        objectsMade = 0
        guard cells.capacity >= count, count > 0 else {
            cells = []
            // At least one cell of room, so that the buffer has an address.
            cells = try ContiguousArray(unsafeUninitializedCapacity: Swift.max(count, 1)) { buffer, initialized in
                try write(buffer.baseAddress!, &initialized)
            }
            return
        }
        // NULL holds nothing to free, so a cell written over one needs no destroy first.
        cells.removeAll(keepingCapacity: true)
        cells.append(contentsOf: repeatElement(.null, count: count))
        var written = 0
        defer { cells.removeLast(count - written) }
        try cells.withUnsafeMutableBufferPointer { buffer in
            try write(buffer.baseAddress!, &written)
        }
    }

    /// ``replaceCells(count:_:)`` for raw cells, over `result` from now on (see ``RawCells``).
    func replaceRawCells(
        count: Int, of result: PostgresResult, _ write: (_ cells: UnsafeMutablePointer<RawCell>, _ written: inout Int) throws -> Void
    ) throws {
        self.result = result
        objectsMade = 0
        if cells.capacity > 0 { cells = [] }
        try rawCells.replace(count: count, write)
    }
}

/// The raw cells of a ``ValueStorage``, in memory it allocates and frees itself.
///
/// An array's room can only be reused by filling it first: for 100,000 rows of 5 columns
/// that wrote 8 MB of empty cells before every fetch wrote its own over them. A raw cell
/// holds nothing to free, so the cells of a fetch go straight into the room the last one
/// left, and letting go of them is setting the count to zero. Not copyable: one storage
/// owns the memory, and frees it in its `deinit` (a `deinit` here made the compiler crash
/// on the storage's setter in release builds, Swift 6.3.1).
@usableFromInline
struct RawCells: ~Copyable {
    @usableFromInline private(set) var base: UnsafeMutablePointer<RawCell>?
    @usableFromInline private(set) var count = 0
    private(set) var capacity = 0

    init() {}

    /// The cell at `index`, checked in range as an array's would be.
    @inlinable @inline(__always)
    subscript(index: Int) -> RawCell {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "raw cell index out of range")
        return base.unsafelyUnwrapped[index]
    }

    /// Replaces the cells with at most `count` new ones, which `write` initializes in order
    /// at the pointer, counting them in `written`: in the memory there is when it has room,
    /// else in new memory. When `write` throws, the cells are those written so far.
    mutating func replace(count: Int, _ write: (_ cells: UnsafeMutablePointer<RawCell>, _ written: inout Int) throws -> Void) throws {
        self.count = 0
        if capacity < count || base == nil {
            base?.deallocate()
            // At least one cell of room, so that the memory has an address.
            capacity = Swift.max(count, 1)
            base = UnsafeMutablePointer<RawCell>.allocate(capacity: capacity)
        }
        var written = 0
        defer { self.count = written }
        try write(base.unsafelyUnwrapped, &written)
    }

    /// Lets go of the cells, and of their memory unless `keepingCapacity`.
    mutating func removeAll(keepingCapacity: Bool) {
        count = 0
        guard !keepingCapacity else { return }
        base?.deallocate()
        base = nil
        capacity = 0
    }
}

/// A cell of a fetch whose columns are all in binary form and of the types of DESIGN's
/// mapping but `numeric` (or text in either form): see ``ValueStorage/rawCells``. 16 bytes
/// that hold nothing to retain or free. A number, bool or date is decoded at the fetch (and
/// a malformed one fails it there); a text, UUID or `bytea` is where it lies in the fetch's
/// result and becomes a `String`, `UUID` or `Data` each time it is read, as a value read
/// from libpq by hand does. A raw cell never leaves its storage, which keeps the result it
/// points into: what reads it gets a Swift value or a ``StoredValue``.
@usableFromInline
struct RawCell {
    @usableFromInline enum Tag: UInt8 {
        case null, integer, double, float, bool, date
        /// Bytes in the result, read as a `String`, a `UUID` or `Data`.
        case text, uuid, bytes
    }

    /// The integer, the floating-point number's bits (a date's `timeIntervalSinceReferenceDate`),
    /// the bool (0 or 1), or the address of the bytes in the result.
    @usableFromInline let bits: UInt64
    /// The length of the bytes (PostgreSQL's values are at most 1 GB).
    @usableFromInline let length: UInt32
    @usableFromInline let tag: Tag

    /// NULL.
    init() {
        self.init(.null, bits: 0)
    }

    private init(_ tag: Tag, bits: UInt64, length: UInt32 = 0) {
        self.bits = bits
        self.length = length
        self.tag = tag
    }

    init(integer: Int) { self.init(.integer, bits: UInt64(bitPattern: Int64(integer))) }
    init(double: Double) { self.init(.double, bits: double.bitPattern) }
    init(float: Float) { self.init(.float, bits: UInt64(float.bitPattern)) }
    init(bool: Bool) { self.init(.bool, bits: bool ? 1 : 0) }
    init(date: Date) { self.init(.date, bits: date.timeIntervalSinceReferenceDate.bitPattern) }

    /// A text, UUID or bytea value at `bytes`, which must outlive the cell.
    init(_ tag: Tag, at bytes: UnsafeRawBufferPointer) {
        self.init(tag, bits: UInt64(UInt(bitPattern: bytes.baseAddress)), length: UInt32(truncatingIfNeeded: bytes.count))
    }

    // Each case's value, decoded in one place for the three ways a cell is read below.
    @inlinable var integer: Int { Int(truncatingIfNeeded: Int64(bitPattern: bits)) }
    @inlinable var double: Double { Double(bitPattern: bits) }
    @inlinable var float: Float { Float(bitPattern: UInt32(truncatingIfNeeded: bits)) }
    @inlinable var bool: Bool { bits != 0 }
    @inlinable var date: Date { Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)) }
    @inlinable var string: String { String(decoding: bytes, as: UTF8.self) }
    @inlinable var uuid: UUID { UUID(uuid: bytes.loadUnaligned(as: uuid_t.self)) }
    @inlinable var data: Data { Data(bytes) }

    @inlinable
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: UInt(bits)), count: Int(length))
    }

    /// The value as a `Value` without a ``StoredValue`` in between, as
    /// ``StoredValue/unboxed(as:)`` answers it. Inlined into the typed reads, where `Value`
    /// is known and each case's cast is decided when compiling; a text, UUID or `bytea`
    /// is made only when `Value` can hold it.
    @inlinable @inline(__always)
    func unboxed<Value>(as type: Value.Type) -> Value?? {
        switch tag {
        case .null: return .some(nil)
        case .integer: if let value = integer as? Value { return .some(value) }
        case .double: if let value = double as? Value { return .some(value) }
        case .float: if let value = float as? Value { return .some(value) }
        case .bool: if let value = bool as? Value { return .some(value) }
        case .date: if let value = date as? Value { return .some(value) }
        case .text: if String.self is Value.Type, let value = string as? Value { return .some(value) }
        case .uuid: if UUID.self is Value.Type, let value = uuid as? Value { return .some(value) }
        case .bytes: if Data.self is Value.Type, let value = data as? Value { return .some(value) }
        }
        return nil
    }

    /// Whether the cell holds what memory holds as `value` (as ``StoredValue/isSame(as:)``
    /// compares them), without a `String` made of a text: a row read again most often
    /// holds what memory holds, and is then left alone. `nil` when it cannot tell here.
    func holds(_ value: StoredValue) -> Bool? {
        switch (tag, value) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.integer, .integer(let held)): return integer == held
        case (.double, .double(let held)): return double == held
        case (.float, .float(let held)): return float == held
        case (.bool, .bool(let held)): return bool == held
        case (.date, .date(let held)): return date == held
        case (.text, .string(var held)):
            // A native string's bytes, compared in place.
            return held.withUTF8 { $0.count == bytes.count && ($0.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, $0.count) == 0) }
        case (.uuid, .uuid(let held)): return uuid == held
        case (.bytes, .data(let held)): return held.elementsEqual(bytes)
        default: return nil
        }
    }

    /// Whether two raw cells hold the same value: for texts, UUIDs and `bytea`, the same bytes.
    func holds(_ other: RawCell) -> Bool {
        guard tag == other.tag else { return false }
        switch tag {
        case .text, .uuid, .bytes:
            return length == other.length && (length == 0 || memcmp(bytes.baseAddress!, other.bytes.baseAddress!, Int(length)) == 0)
        case .double, .float, .date:
            // As the values compare (0.0 and -0.0 alike, NaN unlike itself).
            return value.isSame(as: other.value)
        case .null, .integer, .bool:
            return bits == other.bits
        }
    }

    /// The value as ``DatabaseObject/value(forKey:)`` answers it, without a ``StoredValue``
    /// in between.
    @inlinable
    var anyValue: (any Sendable)? {
        switch tag {
        case .null: nil
        case .integer: integer
        case .double: double
        case .float: float
        case .bool: bool
        case .date: date
        case .text: string
        case .uuid: uuid
        case .bytes: data
        }
    }

    /// ``anyValue`` as `Any`, which ``DatabaseObject/value(forKey:)`` answers. The same switch
    /// on purpose: an `any Sendable` boxed again as `Any` cost reading 100,000 rows with
    /// `value(forKey:) as? T` 44 M instructions of 420 M (callgrind), 1.39–1.40× raw libpq
    /// against 1.32×.
    @inlinable @inline(__always)
    var boxed: Any? {
        switch tag {
        case .null: nil
        case .integer: integer
        case .double: double
        case .float: float
        case .bool: bool
        case .date: date
        case .text: string
        case .uuid: uuid
        case .bytes: data
        }
    }

    /// The value as the object layer's other readers take it (keys, comparisons, writes).
    @inlinable
    var value: StoredValue {
        switch tag {
        case .null: .null
        case .integer: .integer(integer)
        case .double: .double(double)
        case .float: .float(float)
        case .bool: .bool(bool)
        case .date: .date(date)
        case .text: .string(string)
        case .uuid: .uuid(uuid)
        case .bytes: .data(data)
        }
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
        storage.value(base: base, column: index)
    }

    var description: String { Array(self).description }
}
