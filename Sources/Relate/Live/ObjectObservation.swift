import Observation

extension DatabaseContext {
    /// Whether reading this context's objects and relationship sets registers with Swift's
    /// Observation: inside `withObservationTracking` (or a SwiftUI view's body), reading an
    /// attribute, a to-one or a set's members registers exactly that, and the `onChange`
    /// fires when that changes in memory — an own write, another client's commit once
    /// ``processChanges()`` applies it, a ``refresh(_:)``, a roll-back, a delete — and for
    /// nothing else.
    ///
    /// ```swift
    /// context.isObservable = true
    /// withObservationTracking { _ = try? ada.value(forKey: "surname") } onChange: { print("surname changed") }
    /// try ada.setValue("King", forKey: "surname")       // prints
    /// try ada.setValue("Augusta", forKey: "firstname")  // an attribute nobody read: nothing
    /// ```
    ///
    /// Off by default, because it is not free: Observation is told of every read, whether
    /// anything is tracking or not, and each object read gets a registrar of its own. Reading 100,000 rows and all their
    /// attributes took 3.5–3.8× what raw libpq takes with it on, 1.24–1.26× with it off
    /// (`RelateProfile objects-fetch-observed`). Turn it on for the context that feeds a
    /// user interface, before its objects are read. ``LiveResults`` is observable whatever
    /// this says.
    public var isObservable: Bool {
        get { graph.tables.first?.observation != nil }
        set {
            guard newValue != isObservable else { return }
            for table in graph.tables { table.setObservable(newValue) }
        }
    }
}

/// `DatabaseObject` is `Observable` when its context ``DatabaseContext/isObservable``:
/// each attribute and each relationship is a property of its own.
extension DatabaseObject: Observable {}

/// `RelationshipSet` is `Observable` when its owner's context
/// ``DatabaseContext/isObservable``: its members are one property.
extension RelationshipSet: Observable {}

/// What an observable context tells Observation of one entity's objects: a key path for
/// each attribute and each relationship (an object's registrar keys its observers by
/// them), and which to-ones each column decides.
final class ObjectObservation {
    private let attributes: [KeyPath<DatabaseObject, Void>]
    private let relationships: [KeyPath<DatabaseObject, Void>]
    /// The to-ones whose foreign key holds each attribute: their answer changes with it.
    private let toOnesByAttribute: [[Int]]

    init(_ layout: EntityLayout) {
        attributes = layout.attributeKeys.indices.map { \DatabaseObject.[observedAttribute: $0] }
        relationships = layout.isToMany.indices.map { \DatabaseObject.[observedRelationship: $0] }
        var toOnes = [[Int]](repeating: [], count: layout.attributeKeys.count)
        for (relationship, isToMany) in layout.isToMany.enumerated() where !isToMany {
            for column in layout.fromColumns[relationship] { toOnes[column].append(relationship) }
        }
        toOnesByAttribute = toOnes
    }

    /// Made on the object's first observed read: an object nobody observed has none.
    private func registrar(of object: DatabaseObject) -> ObservationRegistrar {
        if let registrar = object.loaded?.registrar { return registrar }
        let registrar = ObservationRegistrar()
        object.relations.registrar = registrar
        return registrar
    }

    func read(attribute index: Int, of object: DatabaseObject) {
        registrar(of: object).access(object, keyPath: attributes[index])
    }

    func read(relationship index: Int, of object: DatabaseObject) {
        registrar(of: object).access(object, keyPath: relationships[index])
    }

    /// The key paths that change when the attributes at `changed` do: theirs, and the
    /// to-ones their values lead through.
    private func keyPaths(changing changed: [Int]) -> [KeyPath<DatabaseObject, Void>] {
        changed.map { attributes[$0] } + Set(changed.flatMap { toOnesByAttribute[$0] }).sorted().map { relationships[$0] }
    }

    /// Runs `change`, which changes the attributes at `changed` of `object`, telling its
    /// observers before and after.
    func change(attributes changed: [Int], of object: DatabaseObject, _ change: () -> Void) {
        guard let registrar = object.loaded?.registrar, !changed.isEmpty else { return change() }
        tell(registrar, object, keyPaths(changing: changed), change)
    }

    /// Runs `change`, which changes the to-one at `index` of `object`.
    func change(relationship index: Int, of object: DatabaseObject, _ change: () -> Void) {
        guard let registrar = object.loaded?.registrar else { return change() }
        tell(registrar, object, [relationships[index]], change)
    }

    /// Runs `change`, which deletes `object` or brings it back: every attribute and
    /// relationship reads differently (or throws) after it.
    func change(everythingOf object: DatabaseObject, _ change: () -> Void) {
        guard let registrar = object.loaded?.registrar else { return change() }
        tell(registrar, object, attributes + relationships, change)
    }

    /// ``DatabaseObject/isBeingEdited`` was read.
    func readEditMark(of object: DatabaseObject) {
        registrar(of: object).access(object, keyPath: \.observedEditMark)
    }

    /// Runs `change`, which marks `object` as being edited elsewhere or clears the mark.
    func change(editMarkOf object: DatabaseObject, _ change: () -> Void) {
        guard let registrar = object.loaded?.registrar else { return change() }
        tell(registrar, object, [\.observedEditMark], change)
    }

    private func tell(
        _ registrar: ObservationRegistrar, _ object: DatabaseObject, _ keyPaths: [KeyPath<DatabaseObject, Void>], _ change: () -> Void
    ) {
        for keyPath in keyPaths { registrar.willSet(object, keyPath: keyPath) }
        change()
        for keyPath in keyPaths { registrar.didSet(object, keyPath: keyPath) }
    }
}

extension EntityTable {
    /// Turns Observation on or off for this entity's objects. On, the inlined read paths
    /// find no attribute (``nextGuess`` out of range, ``directlyReadable`` zero), so every
    /// read takes the path that tells Observation; off, they cost what they cost before.
    func setObservable(_ isObservable: Bool) {
        observation = isObservable ? ObjectObservation(layout) : nil
        nextGuess = isObservable ? Int.max : 0
        directlyReadable = isObservable ? 0 : attributeKeys.count
    }
}

extension DatabaseObject {
    /// The key path components Observation tells an object's attributes and relationships
    /// apart by; never read.
    subscript(observedAttribute index: Int) -> Void { () }
    subscript(observedRelationship index: Int) -> Void { () }
    var observedEditMark: Void { () }

    /// An attribute was read: tells Observation, when the context is observable.
    @usableFromInline func observeRead(attribute index: Int) {
        table.observation?.read(attribute: index, of: self)
    }

    /// A relationship was read: tells Observation, when the context is observable.
    func observeRead(relationship index: Int) {
        table.observation?.read(relationship: index, of: self)
    }

    /// Sets the to-one answer kept for relationship `index`, telling its observers when it
    /// changes from one known answer to another (a first answer is a load, not a change:
    /// nobody can have read what was not there).
    func setToOne(_ index: Int, _ value: DatabaseObject??) {
        let previous = toOne[index]
        guard let observation = table.observation, let known = previous, let next = value, known !== next else {
            relations.toOne[index] = value
            return
        }
        observation.change(relationship: index, of: self) { relations.toOne[index] = value }
    }

    /// Marks the object deleted, or not, telling every observer of it.
    func setDeleted(_ isDeleted: Bool) {
        guard let observation = table.observation else { return self.isDeleted = isDeleted }
        observation.change(everythingOf: self) { self.isDeleted = isDeleted }
    }
}

extension RelationshipSet {
    /// The key path component Observation tells a set's members by; never read.
    var observedMembers: Void { () }

    /// The members were read: tells Observation, when the context is observable.
    func observeMembersRead() {
        guard owner.table.observation != nil else { return }
        if observation == nil { observation = ObservationRegistrar() }
        observation?.access(self, keyPath: \.observedMembers)
    }

    /// Runs `change`, which changes the members, telling the set's observers before and after.
    func changeMembers(_ change: () -> Void) {
        guard let observation else { return change() }
        observation.willSet(self, keyPath: \.observedMembers)
        change()
        observation.didSet(self, keyPath: \.observedMembers)
    }
}
