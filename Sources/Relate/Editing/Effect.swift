import RelatePostgres

/// A write as a value: what memory becomes, and what the database must be told to agree.
///
/// A context that does not autocommit (``DatabaseContext/autocommits``) turns each write
/// call into effects, applies them to memory through ``ObjectGraph/apply(_:)`` (the one
/// place a pending write changes memory: inverses, delete rules, observers) and keeps them
/// until ``DatabaseContext/save()`` plans them into statements. Undo is the graph's journal
/// of the step; redo applies the same effects again.
enum Effect {
    /// A new row: `object` is made in memory and registered under its key, a
    /// ``PendingKey`` where the database will choose it. `columns` are the attributes the
    /// write gave; the others take their defaults on save.
    case insert(DatabaseObject, columns: [Int])
    /// Attributes of `object` take `values` (in `columns`' order). `from` are the values
    /// memory held for them before: what `save()` expects the row still to hold. `releasing`:
    /// a one-to-one's foreign key taken from whoever holds the target (the database's other
    /// holders let go first, on save).
    case update(DatabaseObject, columns: SmallArray<Int>, from: SmallArray<StoredValue>, to: SmallArray<StoredValue>, releasing: Bool)
    /// The object's row is deleted; its dependants in memory follow the `ON DELETE` rules.
    case delete(DatabaseObject)
    /// A many-to-many pair joins (`times` helper rows where the helper may hold a pair twice).
    /// A write through also tells so of a one-to-many member the database links to `owner`
    /// and `owner`'s loaded set did not show.
    case link(owner: DatabaseObject, relationship: Int, member: DatabaseObject, times: Int)
    /// A many-to-many pair leaves, `times` copies of it.
    case unlink(owner: DatabaseObject, relationship: Int, member: DatabaseObject, times: Int)
    /// Many pairs of a many-to-many whose helper holds a pair once: each of `members`
    /// (distinct) is then in `owner`'s set once, whether it was there before or not. A write
    /// through of many at once (``RelationshipSet/insert(contentsOf:)``, a replace): one
    /// append for all, where ``link(owner:relationship:member:times:)`` would look each up.
    case linkOnce(owner: DatabaseObject, relationship: Int, members: [DatabaseObject])
}

/// The value of a primary-key column of an object inserted in a context that does not
/// autocommit, until ``DatabaseContext/save()`` gives it the one the database chose.
///
/// ```swift
/// context.autocommits = false
/// let grace = try context.insert("person", values: ["firstname": "Grace"])
/// try grace.value(forKey: "id")       // a PendingKey: the sequence has not been asked yet
/// try context.save()
/// try grace.value(forKey: "id")       // 42: the same object, under the database's key
/// ```
///
/// Foreign keys that refer to such an object hold its pending key too, and take the real
/// one when it is saved. Each pending key is unique within its process.
public struct PendingKey: Hashable, Sendable, CustomStringConvertible {
    /// Tells pending keys apart: a number drawn once per pending insert.
    public let number: Int

    /// Creates a pending key; a context makes one for each pending insert.
    ///
    /// - Parameter number: The number that tells it from other pending keys.
    public init(number: Int) {
        self.number = number
    }

    /// `pending #3`: never a value the database holds.
    public var description: String { "pending #\(number)" }
}

extension StoredValue {
    /// A parameter given for a column (what ``AttributeValue/encodable(_:for:entity:use:)``
    /// answers), as memory stores it until the database answers the row as stored.
    init(encoded parameter: (any PostgresEncodable)?) {
        guard let parameter else {
            self = .null
            return
        }
        if let scalar = StoredValue(scalar: parameter) {
            self = scalar
            return
        }
        // An array of records is held as a composite array column reads: its records.
        if let array = parameter as? PostgresRecordArray {
            self = StoredValue(array.records)
            return
        }
        // The rest are the library's own encodable values (arrays of the types above, text
        // forms): values, Sendable in fact, which the compiler cannot be told of through
        // `PostgresEncodable` (a marker protocol cannot be cast to). `Any` and `any Sendable`
        // share one layout, Sendable having no witness table.
        self = StoredValue(unsafeBitCast(parameter as Any, to: (any Sendable).self))
    }

    /// What memory holds pending for a parameter given for `attribute`'s column (of
    /// `entity`): the parameter as ``init(encoded:)`` holds it, but a text the library makes
    /// of a value for a column that takes its values so (``Attribute/sendsAsText``: an enum
    /// array's literal, a `JSONValue`'s text for a `json` column, an array of ranges) is held
    /// as a read of that text gives it, so that a pending value reads, and is validated, as
    /// the saved one will. Only a text that the value read from it gives back, byte for
    /// byte, when given again (what the library made): `save()` then sends that same text.
    /// Any other text (one given: `{1.50}`, a `json` document in its own order) stays a text,
    /// sent as given for the server to judge, as with autocommit on.
    init(pending parameter: (any PostgresEncodable)?, for attribute: Attribute, of entity: Entity) {
        if let text = parameter as? String, attribute.sendsAsText {
            let type = attribute.isEnumArray ? PostgresType.textArray : PostgresType(attribute.typeOID)
            let bytes = Array(text.utf8)
            let read = bytes.withUnsafeBytes { bytes -> (any Sendable)? in
                do { return try PostgresValue.decode(from: bytes, type: type, format: .text) } catch { return nil }
            }
            if let read, (try? AttributeValue.encodable(read, for: attribute, entity: entity)) as? String == text {
                self = StoredValue(read)
                return
            }
        }
        self.init(encoded: parameter)
    }

    /// Whether the value is a ``PendingKey``.
    var isPendingKey: Bool {
        if case .other(let box) = self, box.value is PendingKey { return true }
        return false
    }
}
