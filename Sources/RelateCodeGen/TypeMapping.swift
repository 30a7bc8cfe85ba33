/// The Swift type a column's values read as: the table of `PostgresValueMapping` in
/// `RelatePostgres`, by the catalog's type name. A domain reads as its base
/// type; a type without a mapping (`tsvector`, a composite…) as its text, a `String`.
public enum TypeMapping {
    static let scalars: [String: String] = [
        "int2": "Int", "int4": "Int", "int8": "Int", "oid": "Int",
        "float4": "Float", "float8": "Double",
        "numeric": "Decimal",
        "text": "String", "varchar": "String", "bpchar": "String", "name": "String", "char": "String",
        "xml": "String", "unknown": "String",
        "json": "JSONValue", "jsonb": "JSONValue",
        "bool": "Bool",
        "date": "Date", "timestamp": "Date", "timestamptz": "Date",
        "time": "PostgresTime", "timetz": "PostgresTime",
        "interval": "PostgresInterval",
        "inet": "PostgresInet", "cidr": "PostgresInet",
        "macaddr": "PostgresMacAddress", "macaddr8": "PostgresMacAddress",
        "money": "Decimal",
        "int4range": "PostgresRange<Int>", "int8range": "PostgresRange<Int>", "numrange": "PostgresRange<Decimal>",
        "daterange": "PostgresRange<Date>", "tsrange": "PostgresRange<Date>", "tstzrange": "PostgresRange<Date>",
        "int4multirange": "PostgresMultirange<Int>", "int8multirange": "PostgresMultirange<Int>",
        "nummultirange": "PostgresMultirange<Decimal>", "datemultirange": "PostgresMultirange<Date>",
        "tsmultirange": "PostgresMultirange<Date>", "tstzmultirange": "PostgresMultirange<Date>",
        "uuid": "UUID",
        "bytea": "Data",
    ]

    /// Element types whose arrays read as Swift arrays (the others read as their text).
    static let arrayElements: Set<String> = [
        "bool", "bytea", "char", "name", "int2", "int4", "text", "bpchar", "varchar", "int8", "float4", "float8", "oid",
        "timestamp", "date", "timestamptz", "json", "numeric", "uuid", "jsonb", "time", "timetz", "interval", "inet", "cidr",
        "macaddr", "macaddr8", "money", "int4range", "int8range", "numrange", "daterange", "tsrange", "tstzrange",
    ]

    /// The Swift type of a column's non-NULL values.
    ///
    /// - Parameter attribute: the column as the snapshot describes it.
    /// - Returns: `Int`, `String`, `[Int]`…
    public static func swiftType(of attribute: ModelSnapshot.Attribute) -> String {
        swiftType(typeName: attribute.baseType ?? attribute.type)
    }

    /// The Swift type of a PostgreSQL type's values, by the catalog's type name.
    ///
    /// - Parameter typeName: The type's name in the catalog (`int4`, `text[]`, `interval`).
    /// - Returns: The Swift type's name: `Int`, `[String]`, and `String` for a type without a mapping.
    public static func swiftType(typeName: String) -> String {
        if let scalar = scalars[typeName] { return scalar }
        if typeName.hasSuffix("[]") {
            let element = String(typeName.dropLast(2))
            if arrayElements.contains(element), let scalar = scalars[element] { return "[\(scalar)]" }
        }
        return "String"
    }
}
