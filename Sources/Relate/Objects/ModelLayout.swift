/// A model with the SQL pieces of each entity, made once and shared by every context of
/// the model: a context made from it sends no catalog query and quotes nothing again.
final class ModelLayout: Sendable {
    let model: Model
    /// By entity index in `model.entities`.
    let entities: [EntityLayout]
    private let entityIndex: [QualifiedName: Int]
    /// For each entity that others inherit from (`INHERITS`, at any depth), their indexes:
    /// a fetch of it hands their rows out as their objects.
    let descendants: [Int: [Int]]
    /// For each view (not a materialized view, which changes only when refreshed): the
    /// entities its rows come from, through views it reads too. A change to them changes
    /// the view; a write through the view changes them.
    let viewBases: [Int: Set<Int>]

    /// `quote` quotes an identifier (a connection's `quoteIdentifier`, libpq's escaping).
    init(model: Model, quote: (String) throws -> String) throws {
        self.model = model
        var entityIndex: [QualifiedName: Int] = [:]
        for (index, entity) in model.entities.enumerated() { entityIndex[QualifiedName(entity.schema, entity.table)] = index }
        self.entityIndex = entityIndex
        var descendants: [Int: [Int]] = [:]
        for (index, entity) in model.entities.enumerated() where entity.parent != nil {
            var seen = Set([index])
            var parent = entity.parent.flatMap { try? model.position(of: $0) }
            while let ancestor = parent, seen.insert(ancestor).inserted {
                descendants[ancestor, default: []].append(index)
                parent = model.entities[ancestor].parent.flatMap { try? model.position(of: $0) }
            }
        }
        self.descendants = descendants
        var viewBases: [Int: Set<Int>] = [:]
        for (index, entity) in model.entities.enumerated() where entity.kind == .view && !entity.reads.isEmpty {
            var bases = Set<Int>()
            var next = entity.reads.compactMap { try? model.position(of: $0) }
            while let read = next.popLast() {
                guard bases.insert(read).inserted else { continue }
                if model.entities[read].kind == .view { next += model.entities[read].reads.compactMap { try? model.position(of: $0) } }
            }
            bases.remove(index)
            viewBases[index] = bases
        }
        self.viewBases = viewBases
        // Entities with a table under them that is none of the model's descendants of them.
        func hasOtherChildren(_ index: Int) -> Bool {
            model.entities[index].children.contains { child in
                entityIndex[child].map { model.entities[$0].parent.flatMap { try? model.position(of: $0) } != index } ?? true
            }
        }
        entities = try model.entities.enumerated().map { index, entity in
            let own = [index] + (descendants[index] ?? [])
            let ownTables = try own.contains(where: hasOtherChildren)
                ? own.map { try quote(model.entities[$0].schema) + "." + quote(model.entities[$0].table) } : nil
            return try EntityLayout(
                entity: entity, index: index, model: model, entityIndex: entityIndex, hasDescendants: descendants[index] != nil,
                ownTables: ownTables, quote: quote)
        }
    }

    /// The index of the entity called `name` (`person`, or `schema.table`).
    func entityIndex(named name: String) throws(RelateError) -> Int {
        try model.position(of: name)
    }

    /// The index of the entity at a relationship's end or a helper table, when the model has it.
    func entityIndex(schema: String, table: String) -> Int? {
        entityIndex[QualifiedName(schema, table)]
    }
}
