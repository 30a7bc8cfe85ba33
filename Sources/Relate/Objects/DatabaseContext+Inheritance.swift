import RelatePostgres

extension DatabaseContext {
    /// The objects of a fetch of `entity`, a table others `INHERITS` from, whose result's last
    /// column says whose each row is (``Statements/descendantMarker(_:of:bind:)``: 0 for the
    /// entity's own, `n` for `descendants[n - 1]`). The entity's own rows are its objects; a
    /// descendant's row is an object of the descendant's entity, read again from its own table
    /// by its key (one query per descendant present), since the parent's columns are not all
    /// of a child's. The order is the result's; a row deleted between the two reads is left out.
    ///
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest`` when
    ///   a descendant's rows are present and it has no key whose columns the parent has (its
    ///   rows could not be told apart), before a second query is sent.
    func materialize(entity: Int, descendants: [Int], result: PostgresResult) throws -> [DatabaseObject] {
        let marker = result.columns.count - 1
        let parent = layout.entities[entity]
        let readers = StoredValue.Reader.readers(for: result, entity: parent.entity)
        // Each row: the entity's own object, or the descendant and the row's key in it.
        enum Row {
            case own(DatabaseObject)
            case descendant(Int, [StoredValue])
        }
        var ordered: [Row] = []
        ordered.reserveCapacity(result.count)
        var keys: [Int: [[StoredValue]]] = [:]
        var keyColumns: [Int: [Int]] = [:]
        for index in 0..<result.count {
            let row = result[index]
            let which = try row.decode(Int.self, at: marker)
            guard which > 0, which <= descendants.count else {
                ordered.append(.own(try graph.materialize(entity: entity, row: row)))
                continue
            }
            let descendant = descendants[which - 1]
            if keyColumns[descendant] == nil {
                keyColumns[descendant] = try Self.keyColumns(of: layout.entities[descendant], in: parent)
            }
            let key = try keyColumns[descendant]!.map { try readers[$0].read(row, at: $0) }
            keys[descendant, default: []].append(key)
            ordered.append(.descendant(descendant, key))
        }
        for (descendant, descendantKeys) in keys.sorted(by: { $0.key < $1.key }) {
            _ = try graph.materialize(entity: descendant, result: try rows(of: descendant, keys: descendantKeys), rowsAreDistinct: false)
        }
        return ordered.compactMap { row in
            switch row {
            case .own(let object): object
            case .descendant(let descendant, let key): ObjectKey(key).flatMap { graph.registries[descendant][$0] }
            }
        }
    }

    /// The parent's attribute indexes of the columns of `child`'s key.
    static func keyColumns(of child: EntityLayout, in parent: EntityLayout) throws -> [Int] {
        let names = child.entity.primaryKey
        let indexes = names.compactMap { name in parent.entity.attributes.firstIndex { $0.name == name } }
        guard !names.isEmpty, indexes.count == names.count else {
            throw RelateError(
                kind: .invalidRequest,
                message: "rows of \"\(child.entity.name)\" are among those of \"\(parent.entity.name)\", and "
                    + (names.isEmpty ? "\"\(child.entity.name)\" has no key" : "\"\(parent.entity.name)\" lacks its key's columns")
                    + " to read them as its objects by; fetch \"\(parent.entity.name)\" with FetchRequest's only, or declare a key "
                    + "with Override.primaryKey(of:columns:)",
                entity: child.entity.name)
        }
        return indexes
    }
}
