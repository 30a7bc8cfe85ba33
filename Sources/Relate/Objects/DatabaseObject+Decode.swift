import Foundation

extension DatabaseObject {
    /// How the keys of a `Decodable` type map to an entity's keys.
    public enum KeyDecodingStrategy: Sendable {
        /// A property `firstname` reads the key `firstname`.
        case useDefaultKeys
        /// A property `firstName` reads the key `first_name` (as `JSONDecoder`'s strategy).
        case convertFromSnakeCase
        /// The property name for each key of the entity.
        case custom(@Sendable (String) -> String)
    }

    /// The object as a value that can leave its context (and its task):
    ///
    /// ```swift
    /// struct Email: Decodable { var address: String }
    /// struct Person: Decodable { var id: Int; var firstname: String?; var email: [Email] }
    /// let ada = try database.read { context in
    ///     let person = try context.object("person", primaryKey: 1)!
    ///     try context.prefetch(["email"], for: [person])
    ///     return try person.decode(Person.self)
    /// }
    /// ```
    ///
    /// Attributes decode by key as their Swift values (integers into any integer type
    /// they fit, a `String` into a `RawRepresentable` enum…). To-one and to-many keys
    /// decode nested when they are in memory (loaded, prefetched, or a to-one whose target
    /// is registered); decoding never queries, so one that is not in memory is an error
    /// naming the key (``RelateError/Kind-swift.struct/notLoaded``).
    ///
    /// - Parameters:
    ///   - type: The `Decodable` type to decode.
    ///   - keyDecodingStrategy: How coding keys map to the model's keys; the keys as they are
    ///     by default.
    /// - Returns: The value.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/notLoaded`` for a
    ///   relationship not in memory, or a `DecodingError` when a value does not fit.
    public func decode<Value: Decodable>(
        _ type: Value.Type, keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys
    ) throws -> Value {
        _ = try liveContext()
        return try Value(from: ObjectDecoder(object: self, strategy: keyDecodingStrategy, codingPath: []))
    }

    /// The attributes as plain values, by key; NULL attributes are left out.
    ///
    /// - Returns: The attributes by key.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidObject`` when
    ///   the object is deleted or its context is gone.
    public func snapshot() throws -> [String: any Sendable] {
        _ = try liveContext()
        var values: [String: any Sendable] = [:]
        for (index, key) in table.attributeKeys.enumerated() {
            observeRead(attribute: index)
            if let value = anyValue(at: index) { values[key] = value }
        }
        return values
    }

    /// What `key` holds without a query: an attribute's value, a to-one's object (or nil),
    /// a to-many's members; `nil` when the key is unknown.
    fileprivate func decodable(forKey key: String) throws -> DecodedValue? {
        guard let context else { throw RelateError(kind: .invalidObject, message: "the DatabaseContext of this object is gone") }
        switch table.keys[key] {
        case .attribute(let index)?:
            observeRead(attribute: index)
            return .attribute(anyValue(at: index))
        case .relationship(let index)?:
            if table.isToMany[index] {
                guard let set = sets[index] else { throw notLoaded(key) }
                return .members(set.allObjects)
            }
            observeRead(relationship: index)
            if let cached = toOne[index] { return .object(cached) }
            if entity.relationships[index].foreignKeyIn == .from {
                let values = table.fromColumns[index].map { self.values[$0] }
                if values.contains(where: \.isNull) { return .object(nil) }
                if let found = context.graph.registered(
                    entity: context.graph.target(of: entityIndex, index), indexes: context.graph.targetColumns(of: entityIndex, index),
                    values: values)
                {
                    return .object(found)
                }
            }
            throw notLoaded(key)
        case .ambiguous(let candidates)?:
            throw RelateError.ambiguousKey(key, entity: entity.name, candidates: candidates)
        case nil:
            return nil
        }
    }

    private func notLoaded(_ key: String) -> RelateError {
        RelateError(
            kind: .notLoaded,
            message: "key \"\(key)\" of \"\(entity.name)\" is not in memory, and decoding sends no query: prefetch it or read it first",
            entity: entity.name, key: key)
    }
}

private enum DecodedValue {
    case attribute((any Sendable)?)
    case object(DatabaseObject?)
    case members([DatabaseObject])
}

/// Decodes an object: a keyed container over its keys.
private struct ObjectDecoder: Decoder {
    let object: DatabaseObject
    let strategy: DatabaseObject.KeyDecodingStrategy
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ObjectContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: codingPath, debugDescription: "a \(object.entity.name) object decodes as a keyed value, not a list"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Any.self, .init(codingPath: codingPath, debugDescription: "a \(object.entity.name) object decodes as a keyed value"))
    }
}

private struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ObjectDecoder
    /// The entity's key for each property name the strategy gives.
    let entityKeys: [String: String]

    init(decoder: ObjectDecoder) {
        self.decoder = decoder
        var keys: [String: String] = [:]
        for key in decoder.object.entity.keyNames {
            switch decoder.strategy {
            case .useDefaultKeys: keys[key] = key
            case .convertFromSnakeCase: keys[Self.camelCase(key)] = key
            case .custom(let convert): keys[convert(key)] = key
            }
        }
        entityKeys = keys
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { entityKeys.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entityKeys[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        switch try value(forKey: key) {
        case .attribute(let value): value == nil
        case .object(let object): object == nil
        case .members: false
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let path = codingPath + [key]
        switch try value(forKey: key) {
        case .attribute(let value):
            guard let value else {
                throw DecodingError.valueNotFound(T.self, .init(codingPath: path, debugDescription: "\(describe(key)) is NULL"))
            }
            return try ValueDecoder(value: value, codingPath: path).decode(T.self)
        case .object(let object):
            guard let object else {
                throw DecodingError.valueNotFound(T.self, .init(codingPath: path, debugDescription: "\(describe(key)) leads to no object"))
            }
            return try T(from: ObjectDecoder(object: object, strategy: decoder.strategy, codingPath: path))
        case .members(let members):
            let elements = members.map { member in ObjectDecoder(object: member, strategy: decoder.strategy, codingPath: path) as any Decoder }
            return try T(from: ListDecoder(elements: elements, codingPath: path))
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        guard case .object(let object?) = try value(forKey: key) else {
            throw DecodingError.typeMismatch(
                [String: Any].self, .init(codingPath: codingPath + [key], debugDescription: "\(describe(key)) is not one object"))
        }
        return try ObjectDecoder(object: object, strategy: decoder.strategy, codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        guard case .members(let members) = try value(forKey: key) else {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath + [key], debugDescription: "\(describe(key)) is not to-many"))
        }
        let elements = members.map { ObjectDecoder(object: $0, strategy: decoder.strategy, codingPath: codingPath + [key]) as any Decoder }
        return try ListDecoder(elements: elements, codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }

    private func value(forKey key: Key) throws -> DecodedValue {
        let object = decoder.object
        guard let entityKey = entityKeys[key.stringValue], let value = try object.decodable(forKey: entityKey) else {
            throw DecodingError.keyNotFound(
                key, .init(
                    codingPath: codingPath,
                    debugDescription: "entity \"\(object.entity.name)\" has no key for \"\(key.stringValue)\"; its keys: "
                        + entityKeys.keys.sorted().joined(separator: ", ")))
        }
        return value
    }

    private func describe(_ key: Key) -> String {
        "key \"\(entityKeys[key.stringValue] ?? key.stringValue)\" of \"\(decoder.object.entity.name)\""
    }

    /// `first_name` → `firstName`; leading and trailing underscores stay.
    static func camelCase(_ key: String) -> String {
        guard key.contains("_") else { return key }
        let leading = key.prefix { $0 == "_" }
        let trailing = key.reversed().prefix { $0 == "_" }
        let core = key.dropFirst(leading.count).dropLast(trailing.count)
        let words = core.split(separator: "_")
        guard let first = words.first else { return key }
        return leading + first + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() + String(trailing)
    }
}

/// Decodes a list of decoders' values (a to-many's members, an array attribute).
private struct ListDecoder: Decoder {
    let elements: [any Decoder]
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "a list, not a keyed value"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { ListContainer(elements: elements, codingPath: codingPath) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a list, not a single value"))
    }
}

private struct ListContainer: UnkeyedDecodingContainer {
    let elements: [any Decoder]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    init(elements: [any Decoder], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw end(Any?.self) }
        if let value = elements[currentIndex] as? ValueDecoder, value.value == nil {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw end(T.self) }
        defer { currentIndex += 1 }
        return try T(from: elements[currentIndex])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        guard !isAtEnd else { throw end([String: Any].self) }
        defer { currentIndex += 1 }
        return try elements[currentIndex].container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard !isAtEnd else { throw end([Any].self) }
        defer { currentIndex += 1 }
        return try elements[currentIndex].unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        guard !isAtEnd else { throw end(Any.self) }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    private func end(_ type: Any.Type) -> DecodingError {
        .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "the list has only \(elements.count) elements"))
    }
}

/// Decodes an attribute's Swift value: as itself, an integer as any integer type it fits,
/// a number as a floating-point type, an array element by element, and anything else
/// through a single value (`RawRepresentable` enums).
private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: Any?
    let codingPath: [any CodingKey]
    /// Set while a type decodes itself from this value (`init(from:)`): it may ask for the
    /// value as a type it is, but never again through its own `init(from:)`.
    var isInsideType = false
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw mismatch([String: Any].self)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = value as? [Any] else { throw mismatch([Any].self) }
        let elements = array.map { ValueDecoder(value: AttributeValue.unwrap($0), codingPath: codingPath) as any Decoder }
        return ListContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value == nil }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard let value else { throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath, debugDescription: "NULL")) }
        if let same = value as? T { return same }
        if let integer = value as? Int, let integerType = T.self as? any FixedWidthInteger.Type {
            guard let converted = integerType.init(exactly: integer) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "the integer does not fit in \(T.self)"))
            }
            if let converted = converted as? T { return converted }
        }
        if let floatingType = T.self as? any BinaryFloatingPoint.Type {
            let number: Double? =
                switch value {
                case let double as Double: double
                case let float as Float: Double(float)
                case let integer as Int: Double(integer)
                default: nil
                }
            if let number, let converted = floatingType.init(number) as? T { return converted }
        }
        if T.self == Decimal.self, let integer = value as? Int, let decimal = Decimal(integer) as? T { return decimal }
        // A type of its own (an enum over a String, say) decodes from this single value.
        guard !isInsideType else { throw mismatch(T.self) }
        var inside = self
        inside.isInsideType = true
        return try T(from: inside)
    }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "the value is a \(Swift.type(of: value ?? "NULL")), not \(type)"))
    }
}
