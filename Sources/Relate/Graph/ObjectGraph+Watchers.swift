/// Who is told when memory changes: the live results whose region holds a changed
/// entity. The graph is the one place memory changes, so the one place that tells.
extension ObjectGraph {
    /// Starts telling `watcher` of changes to rows of the entities in `region`.
    func watch(_ watcher: LiveResults, region: Set<Int>) {
        for entity in region { watchers[entity, default: []].append(Weak(watcher)) }
    }

    /// Rows of `entity` changed in memory (values, membership, an insert or a delete): the
    /// live results whose region holds it are stale; for a view, those over the entities
    /// it reads too.
    func noteChange(of entity: Int) {
        guard !watchers.isEmpty else { return }
        // A write through a view changed the rows it reads.
        for base in layout.viewBases[entity] ?? [] { noteChangeOfOne(base) }
        noteChangeOfOne(entity)
    }

    private func noteChangeOfOne(_ entity: Int) {
        guard let list = watchers[entity] else { return }
        var gone = false
        for watcher in list {
            if let live = watcher.value { live.regionChanged() } else { gone = true }
        }
        if gone { watchers[entity] = list.filter { $0.value != nil } }
    }

    /// The rows at both ends of relationship `index` of `entity`, and its helper table's,
    /// changed (a member joined or left).
    func noteChange(across index: Int, of entity: Int) {
        guard !watchers.isEmpty else { return }
        let owner = layout.entities[entity]
        noteChange(of: entity)
        noteChange(of: owner.targets[index])
        if let helper = owner.helpers[index] { noteChange(of: helper) }
    }

    /// Memory may have changed anywhere (a roll-back undid changes, a reset forgot every
    /// object): every live result is stale.
    func noteChangeOfEverything() {
        guard !watchers.isEmpty else { return }
        for entity in Array(watchers.keys) { noteChange(of: entity) }
    }
}
