/// Dotted key paths (`"email.address"`, `"person.surname"`), resolved against the model in
/// one place for every use: conditions and sort orders, prefetching, `value(forKeyPath:)`.
/// Each use then says which steps it takes (a condition crosses a to-many only through
/// `any`/`all`/`none`; a prefetch follows relationships only).
extension ModelLayout {
    /// What one key of a path names in the entity it is read from.
    enum KeyStep {
        case attribute(entity: Int, index: Int)
        case relationship(entity: Int, index: Int)

        var entity: Int {
            switch self {
            case .attribute(let entity, _), .relationship(let entity, _): entity
            }
        }
    }

    /// Every key of `keyPath` from `entity`, following relationships; only the last may name
    /// an attribute. An empty key, an unknown or ambiguous one, or an attribute before the
    /// last key throws an error that names the key path (as its `key`), how it was used
    /// (`use`, when given) and the keys there are.
    func steps(of keyPath: String, from entity: Int, use: String? = nil) throws(RelateError) -> [KeyStep] {
        var steps: [KeyStep] = []
        var current = entity
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var position = 0
        while position < parts.count {
            let here = entities[current]
            // A key may hold a dot itself (a table of another schema is named `schema.table`):
            // the longest run of parts that names a key is that key.
            var length = 1
            for candidate in stride(from: parts.count - position, to: 1, by: -1)
            where here.keys[parts[position..<position + candidate].joined(separator: ".")] != nil {
                length = candidate
                break
            }
            let key = parts[position..<position + length].joined(separator: ".")
            position += length
            guard !key.isEmpty else {
                let names = here.entity.keyNames
                throw keyPathError(
                    keyPath, use: use,
                    RelateError(
                        kind: .unknownKey,
                        message: "has an empty key; keys of \"\(here.entity.name)\": " + (names.isEmpty ? "none" : names.joined(separator: ", ")),
                        entity: here.entity.name, candidates: names),
                    joinedBy: " ")
            }
            switch here.keys[key] {
            case .attribute(let index)?:
                guard position == parts.count else {
                    throw keyPathError(
                        keyPath, use: use,
                        RelateError(
                            kind: .unknownKey,
                            message: "\"\(key)\" of \"\(here.entity.name)\" is an attribute; only relationships can be followed",
                            entity: here.entity.name))
                }
                steps.append(.attribute(entity: current, index: index))
            case .relationship(let index)?:
                steps.append(.relationship(entity: current, index: index))
                current = here.targets[index]
            case .ambiguous(let candidates)?:
                throw keyPathError(keyPath, use: use, .ambiguousKey(key, entity: here.entity.name, candidates: candidates))
            case nil:
                throw keyPathError(keyPath, use: use, .unknownKey(key, entity: here.entity.name, existing: here.entity.keyNames))
            }
        }
        return steps
    }

    /// `error` about one key, told as an error about the whole key path.
    func keyPathError(_ keyPath: String, use: String?, _ error: RelateError, joinedBy separator: String = ": ") -> RelateError {
        var error = error
        error.message = "key path \"\(keyPath)\"" + (use.map { " (\($0))" } ?? "") + separator + error.message
        error.key = keyPath
        return error
    }
}
