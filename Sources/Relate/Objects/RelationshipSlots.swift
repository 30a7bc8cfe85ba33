import Observation
/// What an object has loaded, by relationship index: an array sized on the first store
/// (an entity has a handful of relationships), cheaper to fill and to free than a
/// dictionary when a prefetch loads a relationship for thousands of objects.
struct RelationshipSlots<Value>: Sequence {
    private var slots: [Value?] = []

    subscript(index: Int) -> Value? {
        get { index < slots.count ? slots[index] : nil }
        set {
            if index >= slots.count {
                guard newValue != nil else { return }
                slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
            }
            slots[index] = newValue
        }
    }

    mutating func removeAll() {
        slots = []
    }

    /// The loaded relationships: index and value.
    func makeIterator() -> some IteratorProtocol<(Int, Value)> {
        slots.enumerated().lazy.compactMap { index, value in value.map { (index, $0) } }.makeIterator()
    }
}

/// An object's loaded relationships, allocated on the first: most objects of a large
/// fetch never load one, and then cost one empty reference.
///
/// A loaded set holds its owner, and a to-one its target, so loaded relationships tie
/// objects into cycles. The context keeps every box it made until `reset()`, which
/// empties them: that reaches objects the identity map no longer holds too.
final class LoadedRelationships {
    // A context's objects are used from one thread at a time and their slots are never
    // in overlapping accesses: unchecked, which spares a dynamic check per store (a
    // prefetch makes one per owner).
    @exclusivity(unchecked) var sets = RelationshipSlots<RelationshipSet>()
    @exclusivity(unchecked) var toOne = RelationshipSlots<DatabaseObject?>()
    /// Members counted by the database where the set is not loaded (see ``CachedCount``).
    @exclusivity(unchecked) var counts = RelationshipSlots<CachedCount>()
    /// The object's observers, by attribute and relationship; made on its first observed
    /// read (see ``ObjectObservation``). Kept by `takeAll()`: observers outlive a reset.
    var registrar: ObservationRegistrar?

    /// Empties the box; answers what it held, to put back on undo.
    func takeAll() -> (sets: RelationshipSlots<RelationshipSet>, toOne: RelationshipSlots<DatabaseObject?>) {
        defer {
            sets.removeAll()
            toOne.removeAll()
            counts.removeAll()
        }
        return (sets, toOne)
    }
}
