/// Batched fetches in memory: after each batch, the objects nobody holds any longer are let go.
extension ObjectGraph {
    /// Takes `candidates` (objects first registered in a batch) out of the identity map and
    /// lets go of those nobody else holds; the others are registered again. The list must be
    /// the only one: it is emptied.
    ///
    /// Loaded relationships tie objects into cycles (a set holds its owner and its members,
    /// a member's to-one its owner), so each candidate's loaded relationships are first
    /// taken away and only remembered weakly: what survives the let-go is what the program
    /// still holds, directly or through an object that stays.
    func letGoOfUnheldObjects(_ candidates: inout [DatabaseObject]) {
        // Not the first object itself: a reference held here would keep it alive.
        guard let entity = candidates.first?.entityIndex else { return }
        // Usually the batch's own objects are all the map holds of their entity and nothing
        // else registered them: then no identity needs hashing. (The transaction's list
        // holds only objects the body loaded: the batch's join it if they stay.)
        let alone = candidates.allSatisfy({ $0.entityIndex == entity }) && registries[entity].holdsExactly(candidates)
        let listedInTransaction = registeredInTransaction.last?.isEmpty == false
        let identities = alone && !listedInTransaction ? [] : Set(candidates.lazy.map(ObjectIdentifier.init))
        if alone {
            registries[entity].removeAll()
        } else {
            for entity in Set(candidates.lazy.map(\.entityIndex)) {
                registries[entity].remove(objectsIn: identities)
            }
        }
        if listedInTransaction {
            registeredInTransaction[registeredInTransaction.count - 1].removeAll { identities.contains(ObjectIdentifier($0)) }
        }

        // Loaded relationships, remembered weakly.
        var remembered: [ObjectIdentifier: RememberedRelationships] = [:]
        var boxes = Set<ObjectIdentifier>()
        for candidate in candidates {
            guard let box = candidate.loaded else { continue }
            boxes.insert(ObjectIdentifier(box))
            remembered[ObjectIdentifier(candidate)] = RememberedRelationships(box)
            _ = box.takeAll()
            candidate.loaded = nil
        }
        if !boxes.isEmpty {
            loadedBoxes.removeAll { boxes.contains(ObjectIdentifier($0)) }
            // It holds sets (and so their owners) and is keyed by identities about to be
            // freed and reused: built again when next needed.
            manyToManyMemberships = nil
        }

        var survivors: [DatabaseObject] = []
        for position in candidates.indices where !isKnownUniquelyReferenced(&candidates[position]) {
            survivors.append(candidates[position])
        }
        candidates = []
        for survivor in survivors where !survivor.isDeleted {
            guard let key = survivor.objectKey else { continue }
            registries[survivor.entityIndex].register(survivor, key: key)
            if !registeredInTransaction.isEmpty { registeredInTransaction[registeredInTransaction.count - 1].append(survivor) }
            survivor.moveToOwnStorage()
            remembered[ObjectIdentifier(survivor)]?.restore(into: survivor)
        }
    }
}

/// An object's loaded relationships, held weakly while its batch is let go of.
private struct RememberedRelationships {
    private var sets: [(Int, Weak<RelationshipSet>)] = []
    /// `nil`: the to-one was known to be empty.
    private var toOne: [(Int, Weak<DatabaseObject>?)] = []

    init(_ box: LoadedRelationships) {
        for (index, set) in box.sets { sets.append((index, Weak(set))) }
        for (index, target) in box.toOne { toOne.append((index, target.map { Weak($0) })) }
    }

    /// Puts back what is still alive.
    func restore(into object: DatabaseObject) {
        for (index, weak) in sets {
            guard let set = weak.value else { continue }
            object.relations.sets[index] = set
        }
        for (index, target) in toOne {
            guard let target else {
                object.relations.toOne[index] = .some(nil)
                continue
            }
            guard let found = target.value else { continue }
            object.relations.toOne[index] = .some(found)
        }
    }
}
