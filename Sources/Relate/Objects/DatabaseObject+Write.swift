extension DatabaseObject {
    /// Writes at once: an attribute is an `UPDATE` of its column (the object then holds the
    /// value as stored); a to-one key sets the foreign key (a one-to-one steals); a to-many
    /// key replaces the whole collection, writing only the difference (`nil` empties it).
    ///
    /// A value the column cannot take (wrong type, out of range) throws an error naming the
    /// key, the column type and the value's type, and nothing is written.
    ///
    /// ```swift
    /// try ada.setValue("King", forKey: "surname")        // UPDATE person SET surname = $1 …
    /// try email.setValue(grace, forKey: "person")        // moves the email to Grace's set
    /// ```
    ///
    /// - Parameters:
    ///   - value: The attribute's new value (`nil` for NULL), a to-one's new object (`nil` to
    ///     empty it), or a to-many's new members (`[DatabaseObject]` or a ``RelationshipSet``;
    ///     `nil` for none).
    ///   - key: Any name an attribute or relationship of the entity answers to.
    /// - Throws: A ``RelateError``: ``RelateError/Kind-swift.struct/typeMismatch`` for a value
    ///   the column cannot take, ``RelateError/Kind-swift.struct/invalidWrite`` for a write the
    ///   schema cannot take, ``RelateError/Kind-swift.struct/conflict`` when the row changed
    ///   meanwhile, or the database's error. Nothing changes in memory then.
    public func setValue(_ value: Any?, forKey key: String) throws {
        let context = try liveContext()
        switch try context.resolve(key, in: entityIndex) {
        case .attribute(let index):
            try context.setAttribute(self, index, value)
        case .relationship(let index):
            let relationship = entity.relationships[index]
            if relationship.isToMany {
                let members = try collection(AttributeValue.unwrap(value), key: key)
                if try context.replaceKeyedManyToMany(members: members, relationship: index, owner: self) { return }
                try context.replace(members: members, of: relationshipSet(index), owner: self)
            } else {
                let target = try context.relatedObject(AttributeValue.unwrap(value), for: entityIndex, index, key: key)
                try context.setToOne(self, index, target)
            }
        }
    }

    private func collection(_ value: Any?, key: String) throws -> [DatabaseObject] {
        switch value {
        case nil: return []
        case let objects as [DatabaseObject]: return objects
        case let set as RelationshipSet: return set.allObjects.flatMap { Array(repeating: $0, count: set.count(for: $0)) }
        case let object as DatabaseObject: return [object]
        default:
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(entity.name)\" is to-many; give [DatabaseObject], a RelationshipSet or nil, not a \(type(of: value!))",
                entity: entity.name, key: key)
        }
    }
}
