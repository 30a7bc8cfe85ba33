import Foundation
import RelatePostgres

/// A ``Condition`` and a sort order judged in memory, for the objects a context holds
/// pending changes for: the same language, the same semantics as its SQL (Swift's where
/// the two differ: `== nil` is `IS NULL`, `!=` is `IS DISTINCT FROM`, a comparison with a
/// missing value does not hold). Text compares by the column's collation: by code points
/// where that is `C` or `POSIX`, else as the server ranks it (``ServerRanks``); an enum's
/// labels by their order; values whose order is the server's own (an interval, a range,
/// `char(n)`, `NaN`…) as the server ranks them too.
extension DatabaseContext {
    /// Whether `object` meets `node`. Relationships it crosses are loaded where memory does
    /// not hold them (reads), seeing the pending changes. `text` notes the values only the
    /// server compares (collated text, intervals, ranges…) that it has no rank for.
    func meets(_ node: Condition.Node, _ object: DatabaseObject, text: ServerRanks) throws -> Bool {
        switch node {
        case .constant(let value):
            return value
        case .and(let nodes):
            for node in nodes where try !meets(node, object, text: text) { return false }
            return true
        case .or(let nodes):
            for node in nodes where try meets(node, object, text: text) { return true }
            return false
        case .not(let node):
            return try !meets(node, object, text: text)
        case .comparison(let keyPath, let comparison, let given):
            let (value, attribute, entity) = try valueAt(keyPath, of: object)
            guard let attribute else {
                // A to-one compared with nil.
                let isNull = value.isNull
                return comparison == .equal ? isNull == (given == nil) : isNull != (given == nil)
            }
            let wanted = try stored(given, for: attribute, of: object)
            switch comparison {
            case .equal: return value.isNull ? wanted.isNull : Self.same(value, wanted, of: attribute, in: entity, text)
            case .notEqual: return value.isNull != wanted.isNull || (!value.isNull && !Self.same(value, wanted, of: attribute, in: entity, text))
            default: break
            }
            let order = Self.order(value, wanted, of: attribute, in: entity, text)
            switch comparison {
            case .equal, .notEqual: return false
            case .less: return order == .orderedAscending
            case .lessOrEqual: return [.orderedAscending, .orderedSame].contains(order)
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return [.orderedDescending, .orderedSame].contains(order)
            }
        case .isIn(let keyPath, let values):
            let (value, attribute, entity) = try valueAt(keyPath, of: object)
            guard let attribute else { return false }
            for given in values {
                let wanted = try stored(given, for: attribute, of: object)
                if value.isNull ? wanted.isNull : Self.same(value, wanted, of: attribute, in: entity, text) { return true }
            }
            return false
        case .pattern(let keyPath, let pattern, let text, let caseInsensitive):
            let (value, _, _) = try valueAt(keyPath, of: object)
            guard case .string(var string) = value else { return false }
            var text = text
            if caseInsensitive {
                string = string.lowercased()
                text = text.lowercased()
            }
            switch pattern {
            case .prefix: return string.unicodeScalars.starts(with: text.unicodeScalars)
            case .suffix: return string.unicodeScalars.reversed().starts(with: text.unicodeScalars.reversed())
            // By bytes, as `LIKE '%…%'` matches: Swift's `contains` finds a decomposed `é` in a composed one.
            case .contains: return text.isEmpty || string.utf8.firstRange(of: text.utf8) != nil
            case .like: return Self.like(Array(string.unicodeScalars)[...], Array(text.unicodeScalars)[...])
            }
        case .json(let keyPath, let test):
            let (value, _, _) = try valueAt(keyPath, of: object)
            if case .equals(let wanted, let negated) = test {
                let document: JSONValue? = if case .other(let box) = value { box.value as? JSONValue } else { nil }
                return Self.sameJSON(document, wanted) != negated
            }
            guard case .other(let box) = value, let document = box.value as? JSONValue else { return false }
            switch test {
            case .contains(let wanted): return Self.json(document, contains: wanted, atTop: true)
            case .text(let path, let equals): return Self.jsonText(document, at: path[...]).hasSameBytes(as: equals)
            case .equals: return false
            }
        case .quantified(let keyPath, let quantifier, let inner):
            let members = try membersAt(keyPath, of: object)
            switch quantifier {
            case .any: return try inner.map { node in try members.contains { try meets(node, $0, text: text) } } ?? !members.isEmpty
            case .none: return try inner.map { node in try !members.contains { try meets(node, $0, text: text) } } ?? members.isEmpty
            case .all: return try inner.map { node in try members.allSatisfy { try meets(node, $0, text: text) } } ?? true
            }
        }
    }

    /// The value at the end of a key path through to-ones (NULL past a missing one), and the
    /// attribute it is (`nil`: the path ends at a to-one, its object or NULL).
    private func valueAt(_ keyPath: String, of object: DatabaseObject) throws -> (StoredValue, Attribute?, Entity) {
        var current: DatabaseObject? = object
        for step in try layout.steps(of: keyPath, from: object.entityIndex) {
            switch step {
            case .attribute(let entity, let index):
                return (current.map { $0.values[index] } ?? .null, model.entities[entity].attributes[index], model.entities[entity])
            case .relationship(_, let index):
                current = try current?.toOneObject(index)
            }
        }
        return (current == nil ? .null : .integer(1), nil, object.entity)
    }

    /// The members of the to-many at the end of a key path through to-ones.
    private func membersAt(_ keyPath: String, of object: DatabaseObject) throws -> [DatabaseObject] {
        let steps = try layout.steps(of: keyPath, from: object.entityIndex)
        var current: DatabaseObject? = object
        for step in steps.dropLast() {
            guard case .relationship(_, let index) = step else { return [] }
            current = try current?.toOneObject(index)
        }
        guard let owner = current, case .relationship(_, let index)? = steps.last else { return [] }
        return try owner.relationshipSet(index).allObjects.filter { !$0.isDeleted }
    }

    /// A value given in a condition as the attribute stores it.
    private func stored(_ value: (any Sendable)?, for attribute: Attribute, of object: DatabaseObject) throws -> StoredValue {
        StoredValue(pending: try AttributeValue.encodable(value, for: attribute, entity: object.entity, use: .compared), for: attribute, of: object.entity)
    }

    /// Whether two values of `attribute` (of `entity`) are equal: text under a deterministic
    /// collation by its bytes (no round trip), else as ``order(_:_:of:in:_:)`` says.
    static func same(_ a: StoredValue, _ b: StoredValue, of attribute: Attribute, in entity: Entity, _ text: ServerRanks) -> Bool {
        if attribute.collationIsDeterministic, attribute.enumLabels == nil, !isRankedByType(attribute, a, b), case .string(let x) = a,
            case .string(let y) = b
        {
            return x.utf8.elementsEqual(y.utf8)
        }
        return order(a, b, of: attribute, in: entity, text) == .orderedSame
    }

    /// How two values of `attribute` (of `entity`) compare: ranked by the server where only
    /// it can tell (``isRankedByType(_:_:_:)``); text by its collation (ranked by the
    /// server where that is not by code points: `text`), an enum's labels by their order.
    static func order(_ a: StoredValue, _ b: StoredValue, of attribute: Attribute, in entity: Entity, _ text: ServerRanks) -> ComparisonResult? {
        if isRankedByType(attribute, a, b),
            let order = text.order(a, b, type: attribute.typeOID, collation: attribute.collation, parameter: { value in
                (try? AttributeValue.encodable(value.value, for: attribute, entity: entity, use: .compared)) ?? nil
            })
        {
            return order
        }
        if case .string(let x) = a, case .string(let y) = b {
            if let labels = attribute.enumLabels, let i = labels.firstIndex(where: { $0.hasSameBytes(as: x) }),
                let j = labels.firstIndex(where: { $0.hasSameBytes(as: y) })
            {
                return i < j ? .orderedAscending : i > j ? .orderedDescending : .orderedSame
            }
            if let collation = attribute.collation { return text.order(x, y, by: collation) }
        }
        return order(a, b)
    }

    /// Whether two values of `attribute` compare as only the server tells: values of types
    /// of their own (an interval, whose `1 mon` is `30 days`; a range, `[1,5]` being
    /// `[1,6)`; a time, an address, an array, a record) but those it compares as text,
    /// `char(n)` (blind to trailing blanks), and numbers that are not finite (`NaN` equals
    /// itself and follows every number).
    private static func isRankedByType(_ attribute: Attribute, _ a: StoredValue, _ b: StoredValue) -> Bool {
        guard !attribute.comparesAsText else { return false }
        func notFinite(_ value: StoredValue) -> Bool {
            switch value {
            case .double(let x): !x.isFinite
            case .float(let x): !x.isFinite
            case .decimal(let x): x.isNaN
            // A numeric Decimal cannot hold, read as its text (infinite, or past 38 digits).
            case .string: PostgresType(attribute.typeOID) == .numeric
            default: false
            }
        }
        switch (a, b) {
        case (.other, .other): return true
        case (.string, .string): return [.bpchar, .numeric].contains(PostgresType(attribute.typeOID))
        default: return notFinite(a) || notFinite(b)
        }
    }

    /// How two values of one column compare; `nil` when either is NULL or they do not compare.
    static func order(_ a: StoredValue, _ b: StoredValue) -> ComparisonResult? {
        func compare<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult { x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return compare(x, y)
        case (.string(let x), .string(let y)):
            // Code points, as the C collation orders text.
            return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars)
                ? .orderedAscending : y.unicodeScalars.lexicographicallyPrecedes(x.unicodeScalars) ? .orderedDescending : .orderedSame
        case (.bool(let x), .bool(let y)): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        case (.date(let x), .date(let y)): return compare(x, y)
        case (.uuid(let x), .uuid(let y)): return compare(x.uuidString, y.uuidString)
        case (.data(let x), .data(let y)):
            return x.lexicographicallyPrecedes(y) ? .orderedAscending : y.lexicographicallyPrecedes(x) ? .orderedDescending : .orderedSame
        default:
            guard let x = number(a), let y = number(b) else {
                // Arrays and the rest: the same or not, as the server's `=` tells them.
                if case .other(let left) = a, case .other(let right) = b { return sameOther(left.value, right.value) ? .orderedSame : nil }
                return nil
            }
            return compare(x, y)
        }
    }

    private static func number(_ value: StoredValue) -> Decimal? {
        switch value {
        case .integer(let x): Decimal(x)
        case .double(let x) where x.isFinite: Decimal(x)
        case .float(let x) where x.isFinite: Decimal(Double(x))
        case .decimal(let x): x
        default: nil
        }
    }

    /// jsonb's `@>`: objects contain objects key by key, arrays contain every element of an
    /// array (in any order), and at the top an array contains a scalar it holds.
    private static func json(_ document: JSONValue, contains wanted: JSONValue, atTop: Bool) -> Bool {
        switch (document, wanted) {
        case (.object(let fields), .object(let wantedFields)):
            return wantedFields.allSatisfy { key, value in member(key, of: fields).map { json($0, contains: value, atTop: false) } ?? false }
        case (.array(let elements), .array(let wantedElements)):
            return wantedElements.allSatisfy { value in elements.contains { json($0, contains: value, atTop: false) } }
        case (.array(let elements), _) where atTop:
            return elements.contains { sameJSON($0, wanted) }
        case (.object, _), (.array, _), (_, .object), (_, .array):
            return false
        default:
            return sameJSON(document, wanted)
        }
    }

    /// Whether two boxed values are equal as the server's `=` tells them: by their own `==`,
    /// which takes `-0` for `0` and `1.0` for `1` as the server does (their bytes do not),
    /// with the texts inside compared by their bytes (which their `==` does not).
    private static func sameOther(_ a: any Sendable, _ b: any Sendable) -> Bool {
        switch (a, b) {
        case let (x as JSONValue, y as JSONValue): sameJSON(x, y)
        case let (x as [String], y as [String]): ExactTexts(x) == ExactTexts(y)
        case let (x as [String?], y as [String?]): ExactTexts(x) == ExactTexts(y)
        case let (x as [JSONValue], y as [JSONValue]): x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
        case let (x as AnyHashable, y as AnyHashable): x == y
        default: false
        }
    }

    /// Whether two documents are equal as jsonb's `=` tells them: strings and keys by their
    /// bytes, where Swift's `==` takes a composed and a decomposed `é` for one.
    private static func sameJSON(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (.string(let x)?, .string(let y)?): x.hasSameBytes(as: y)
        case (.array(let x)?, .array(let y)?): x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
        case (.object(let x)?, .object(let y)?):
            x.count == y.count && x.allSatisfy { key, value in member(key, of: y).map { sameJSON(value, $0) } ?? false }
        default: a == b
        }
    }

    /// The member of an object named `key` by its bytes (a dictionary's lookup is by `==`).
    private static func member(_ key: String, of fields: [String: JSONValue]) -> JSONValue? {
        fields.first { $0.key.hasSameBytes(as: key) }?.value
    }

    /// `#>>`: the text at `path` (object keys, array positions), `nil` for nothing or JSON null.
    private static func jsonText(_ document: JSONValue, at path: ArraySlice<String>) -> String? {
        guard let step = path.first else {
            switch document {
            case .null: return nil
            case .bool(let flag): return flag ? "true" : "false"
            case .number(let number): return "\(number)"
            case .string(let text): return text
            case .array, .object: return nil
            }
        }
        switch document {
        case .object(let fields): return member(step, of: fields).flatMap { jsonText($0, at: path.dropFirst()) }
        case .array(let elements):
            guard let position = Int(step) else { return nil }
            let index = position < 0 ? elements.count + position : position
            return elements.indices.contains(index) ? jsonText(elements[index], at: path.dropFirst()) : nil
        default: return nil
        }
    }

    /// SQL's `LIKE`: `%` any run, `_` one character, `\` takes the next literally.
    private static func like(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        switch first {
        case "%":
            let rest = pattern.dropFirst()
            var position = text.startIndex
            while true {
                if like(text[position...], rest) { return true }
                if position == text.endIndex { return false }
                position += 1
            }
        case "_":
            return !text.isEmpty && like(text.dropFirst(), pattern.dropFirst())
        case "\\" where pattern.count > 1:
            let literal = pattern[pattern.startIndex + 1]
            return text.first == literal && like(text.dropFirst(), pattern.dropFirst(2))
        default:
            return text.first == first && like(text.dropFirst(), pattern.dropFirst())
        }
    }

    /// Whether `a` goes before `b` in `orderBy` (`nil`: they tie).
    func precedes(_ a: DatabaseObject, _ b: DatabaseObject, in orderBy: [Ordering], text: ServerRanks) throws -> Bool? {
        for ordering in orderBy {
            let (x, attribute, entity) = try valueAt(ordering.keyPath, of: a)
            let (y, _, _) = try valueAt(ordering.keyPath, of: b)
            // PostgreSQL puts NULLs last going up, first going down, unless told.
            let nullsFirst = ordering.nulls == .first || (ordering.nulls == .default && !ordering.isAscending)
            switch (x.isNull, y.isNull) {
            case (true, true): continue
            case (true, false): return nullsFirst
            case (false, true): return !nullsFirst
            case (false, false):
                switch attribute.map({ Self.order(x, y, of: $0, in: entity, text) }) ?? Self.order(x, y) {
                case .orderedAscending?: return ordering.isAscending
                case .orderedDescending?: return !ordering.isAscending
                default: continue
                }
            }
        }
        return nil
    }
}
