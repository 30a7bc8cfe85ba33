import Foundation
import RelatePostgres

/// Values of composite columns as their binary form: a generated struct (``TypedComposite``)
/// or a `PostgresRecord` becomes a record whose fields carry the OIDs the catalog gives
/// (`record_recv` refuses any other), nested composites and arrays of them included.
enum CompositeValue {
    /// `value` for a column (or field) of `type`: a record, or for an array type an array of
    /// records; `nil` for a value that is neither (the caller's mismatch).
    ///
    /// - Throws: The reason, naming the field, when a field's value does not fit its type.
    static func encodable(_ value: Any, type: Catalog.CompositeType, isArray: Bool) throws(CompositeError) -> (any PostgresEncodable)? {
        if isArray {
            guard let elements = try records(value, type: type) else { return nil }
            return PostgresRecordArray(elements, elementType: PostgresType(type.oid))
        }
        return try record(value, type: type)
    }

    struct CompositeError: Error {
        var reason: String
    }

    static func record(_ value: Any, type: Catalog.CompositeType) throws(CompositeError) -> PostgresRecord? {
        if let record = value as? PostgresRecord { return record }
        guard let composite = value as? any TypedComposite else { return nil }
        let values = composite.compositeFieldValues
        guard values.count == type.fields.count else {
            throw CompositeError(
                reason: "\(Swift.type(of: composite)) has \(values.count) fields, composite type \(type.name) \(type.fields.count): regenerate it")
        }
        var fields: [PostgresRecord.Field] = []
        for (field, value) in zip(type.fields, values) {
            fields.append(PostgresRecord.Field(type: PostgresType(field.typeOID), bytes: try bytes(AttributeValue.unwrap(value), for: field, in: type)))
        }
        return PostgresRecord(fields: fields)
    }

    static func records(_ value: Any, type: Catalog.CompositeType) throws(CompositeError) -> [PostgresRecord?]? {
        if let records = value as? [PostgresRecord?] { return records }
        if let records = value as? [PostgresRecord] { return records }
        guard let composites = value as? [any TypedComposite] else { return nil }
        var result: [PostgresRecord?] = []
        for composite in composites { result.append(try record(composite, type: type)) }
        return result
    }

    /// A field's binary form, of exactly the field's type.
    static func bytes(_ value: Any?, for field: Catalog.Field, in type: Catalog.CompositeType) throws(CompositeError) -> [UInt8]? {
        guard let value else { return nil }
        func refused() -> CompositeError {
            CompositeError(reason: "field \"\(field.name)\" of \(type.name) is \(field.type); a \(Swift.type(of: value)) cannot be written there")
        }
        var buffer: [UInt8] = []
        if let nested = field.composite {
            if field.type.hasSuffix("[]") {
                guard let records = try records(value, type: nested) else { throw refused() }
                return PostgresRecord.arrayBinary(records, elementType: PostgresType(nested.oid))
            }
            guard let record = try record(value, type: nested) else { throw refused() }
            record.appendBinary(into: &buffer)
            return buffer
        }
        let fieldType = PostgresType(field.typeOID)
        do {
            switch (fieldType, value) {
            case (.int2, let number as Int):
                guard let narrow = Int16(exactly: number) else { throw refused() }
                withUnsafeBytes(of: narrow.bigEndian) { buffer.append(contentsOf: $0) }
            case (.int4, let number as Int):
                guard let narrow = Int32(exactly: number) else { throw refused() }
                withUnsafeBytes(of: narrow.bigEndian) { buffer.append(contentsOf: $0) }
            case (.int8, let number as Int): withUnsafeBytes(of: Int64(number).bigEndian) { buffer.append(contentsOf: $0) }
            case (.float4, let number as Float): try number.encode(into: &buffer)
            case (.float4, let number as Double): try Float(number).encode(into: &buffer)
            case (.float8, let number as Double): try number.encode(into: &buffer)
            case (.numeric, let number as Decimal): buffer = number.numericBinary()
            case (.numeric, let number as Int): buffer = Decimal(number).numericBinary()
            case (.json, let json as JSONValue): buffer = Array(try json.jsonText().utf8)
            case (.date, let date as Date): try date.encodeBound(into: &buffer, as: .date)
            case (.timestamp, let date as Date), (.timestamptz, let date as Date): try date.encode(into: &buffer)
            case (_, let value as any TypedEnum) where field.enumLabels != nil:
                // An enum's binary form is its label; one the type lacks is refused here,
                // naming the field, rather than by the server.
                guard field.enumLabels?.contains(where: { $0.hasSameBytes(as: value.rawValue) }) == true else { throw refused() }
                buffer = Array(value.rawValue.utf8)
            case (_, let data as Data) where fieldType.mapping == .textForm:
                // A type without a mapping reads as its bytes, and is written back as them.
                buffer = Array(data)
            case (_, let text as String) where fieldType.isTextual || fieldType.mapping == .textForm:
                // Text types' binary form is their text, and so is an enum's.
                buffer = Array(text.utf8)
            case (_, let range as any PostgresAnyRange):
                guard let encodable = range.encodable(as: fieldType) else { throw refused() }
                try encodable.encode(into: &buffer)
            case (_, let encodable as any PostgresEncodable)
            where encodable.postgresValueType == fieldType && Swift.type(of: encodable).postgresFormat == .binary:
                try encodable.encode(into: &buffer)
            case (_, var address as PostgresInet) where fieldType == .inet || fieldType == .cidr:
                address.isNetwork = fieldType == .cidr
                try address.encode(into: &buffer)
            default:
                throw refused()
            }
        } catch let error as CompositeError {
            throw error
        } catch {
            throw CompositeError(reason: "field \"\(field.name)\" of \(type.name): \((error as? PostgresEncodingError)?.reason ?? "\(error)")")
        }
        return buffer
    }
}
