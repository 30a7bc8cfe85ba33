/// The entities a request's answer depends on (its region): its own, every entity its
/// condition and sort order reach through to-one joins, and for a test through a to-many
/// (`any`, `all`, `none`) the members' entity and the helper table it goes through. A
/// change to rows outside the region cannot change the answer.
extension FetchRequest {
    func region(in layout: ModelLayout) throws(RelateError) -> Set<Int> {
        let root = try layout.entityIndex(named: entity)
        var region: Set<Int> = [root]
        if let condition { try Self.collect(condition.node, from: root, in: layout, into: &region) }
        for ordering in orderBy { try Self.collect(ordering.keyPath, from: root, in: layout, into: &region) }
        return region
    }

    private static func collect(_ node: Condition.Node, from entity: Int, in layout: ModelLayout, into region: inout Set<Int>) throws(RelateError) {
        switch node {
        case .constant:
            break
        case .and(let nodes), .or(let nodes):
            for node in nodes { try collect(node, from: entity, in: layout, into: &region) }
        case .not(let node):
            try collect(node, from: entity, in: layout, into: &region)
        case .comparison(let keyPath, _, _), .isIn(let keyPath, _), .pattern(let keyPath, _, _, _):
            try collect(keyPath, from: entity, in: layout, into: &region)
        case .quantified(let keyPath, _, let inner):
            guard let end = try collect(keyPath, from: entity, in: layout, into: &region) else { return }
            if let inner { try collect(inner, from: end, in: layout, into: &region) }
        }
    }

    /// Adds what `keyPath` reaches; answers the entity a relationship at its end leads to.
    @discardableResult
    private static func collect(_ keyPath: String, from entity: Int, in layout: ModelLayout, into region: inout Set<Int>) throws(RelateError) -> Int? {
        var end: Int?
        for step in try layout.steps(of: keyPath, from: entity) {
            region.insert(step.entity)
            end = nil
            if case .relationship(let owner, let index) = step {
                let here = layout.entities[owner]
                region.insert(here.targets[index])
                if let helper = here.helpers[index] { region.insert(helper) }
                end = here.targets[index]
            }
        }
        return end
    }
}
