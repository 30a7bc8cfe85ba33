import Foundation
import RelatePostgres

/// What another client's committed statement changed, as a context applied it.
public struct Change: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case insert, update, delete
    }

    /// The entity's name in the model.
    public var entity: String
    public var kind: Kind
    /// The row's primary key values; empty for a table without a primary key.
    public var primaryKey: [(any Sendable)?]
    /// For an update of an object this context holds: the attribute keys whose values changed.
    public var changedKeys: [String]

    public var description: String {
        "\(kind) \(entity)" + (changedKeys.isEmpty ? "" : " (\(changedKeys.joined(separator: ", ")))")
    }
}

extension DatabaseContext {
    /// Listens for the changes other clients commit (`LISTEN relate_changes`); called by
    /// ``processChanges()`` the first time. Call it before fetching, so that nothing
    /// committed in between is missed. Change tracking must be enabled in the database
    /// (`relate enable`).
    public func startTrackingChanges() throws {
        guard !isTrackingChanges else { return }
        guard try Self.wrappingErrors({ try ChangeTracking.isEnabled(on: connection) }) else {
            throw RelateError(
                kind: .invalidRequest,
                message: "change tracking is not enabled in this database: run `relate enable <url> --schema <schema>` "
                    + "(or ChangeTracking.enable(on:schemas:)) once, as a user who may create triggers")
        }
        _ = try database { try connection.execute("LISTEN \(ChangeTracking.channel)") }
        isTrackingChanges = true
    }

    /// Applies what other clients committed since the last call, whole transactions only
    /// (a notification is delivered when its transaction commits; one that rolled back
    /// never is). Updated rows of objects in memory are read again (attributes, and moves
    /// between loaded sets), deleted ones are marked deleted and leave every set, inserted
    /// or moved rows join the loaded sets they now belong to, helper rows added or removed
    /// refill the loaded many-to-many sets. What this context wrote itself is skipped.
    /// Answers the changes, in commit order.
    ///
    /// ```swift
    /// for change in try context.processChanges() { print(change) }   // "update person (surname)"
    /// ```
    @discardableResult
    public func processChanges() throws -> [Change] {
        try startTrackingChanges()
        let ownProcess = connection.backendProcessID
        let notifications = try database { try connection.notifications() }
            .filter { $0.channel == ChangeTracking.channel && $0.processID != ownProcess }
        guard !notifications.isEmpty else { return [] }
        let notices = try decode(notifications)
        return try apply(notices)
    }

    /// ``processChanges()``, waiting at most `timeout` for the next change when none is there.
    @discardableResult
    public func waitForChanges(timeout: Duration) throws -> [Change] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let changes = try processChanges()
            if !changes.isEmpty { return changes }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return [] }
            _ = try database { try connection.waitForInput(timeout: left) }
        }
    }

    // MARK: - Notices

    /// One statement's change as its trigger notified it.
    struct ChangeNotice {
        var entity: Int
        var kind: Change.Kind
        /// Primary keys as JSON values; `nil` for a table without a primary key.
        var keys: [[Any]]?
        /// An update's keys before.
        var oldKeys: [[Any]]?
    }

    private func decode(_ notifications: [PostgresNotification]) throws -> [ChangeNotice] {
        var objects: [[String: Any]] = []
        var stored: [Int] = []
        for notification in notifications {
            guard let object = try? JSONSerialization.jsonObject(with: Data(notification.payload.utf8)) as? [String: Any] else { continue }
            if let id = object["id"] as? Int { stored.append(id) } else { objects.append(object) }
        }
        if !stored.isEmpty {
            // Payloads too long for NOTIFY, kept in Relate's table.
            let result = try database {
                try connection.query("SELECT payload::text FROM relate_tracking.change WHERE id = ANY($1) ORDER BY id", [stored])
            }
            for row in result {
                let text = try row.decode(String.self, at: 0)
                if let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] { objects.append(object) }
            }
        }
        return objects.compactMap { object in
            guard let schema = object["s"] as? String, let table = object["t"] as? String,
                let entity = layout.entityIndex(schema: schema, table: table), let letter = object["k"] as? String
            else { return nil }
            let kind: Change.Kind = letter == "I" ? .insert : letter == "D" ? .delete : .update
            return ChangeNotice(entity: entity, kind: kind, keys: object["keys"] as? [[Any]], oldKeys: object["old"] as? [[Any]])
        }
    }

    /// A notified key as the values an object stores, by the primary key's column types;
    /// `nil` when a value cannot be matched that way (the entity is then read again whole).
    private func storedKey(_ key: [Any], entity: Int) -> [StoredValue]? {
        let table = tables[entity]
        guard key.count == table.primaryKey.count else { return nil }
        var values: [StoredValue] = []
        for (value, column) in zip(key, table.primaryKey) {
            switch (table.types[column].mapping, value) {
            case (.integer, let number as NSNumber): values.append(.integer(number.intValue))
            case (.string, let text as String): values.append(.string(text))
            case (.uuid, let text as String):
                guard let uuid = UUID(uuidString: text) else { return nil }
                values.append(.uuid(uuid))
            default: return nil
            }
        }
        return values
    }

    // MARK: - Applying

    private func apply(_ notices: [ChangeNotice]) throws -> [Change] {
        defer { membershipsMayChange() }
        // Objects in memory to read again, with their values before; keys not in memory
        // that may join loaded sets; entities to read again whole (keys not given or not
        // matchable); what each notice names, for the answer.
        var inMemory: [DatabaseObject] = []
        var before: [ObjectIdentifier: [StoredValue]] = [:]
        var arrived: [Int: [[StoredValue]]] = [:]
        var whole = Set<Int>()
        var named: [(entity: Int, kind: Change.Kind, key: [StoredValue], object: DatabaseObject?)] = []
        for notice in notices {
            guard let keys = notice.keys else {
                whole.insert(notice.entity)
                named.append((notice.entity, notice.kind, [], nil))
                continue
            }
            let given = keys.count
            for (position, key) in (keys + (notice.oldKeys ?? [])).enumerated() {
                guard let values = storedKey(key, entity: notice.entity) else {
                    whole.insert(notice.entity)
                    continue
                }
                let object = ObjectKey(values).flatMap { registries[notice.entity][$0] }
                if position < given { named.append((notice.entity, notice.kind, values, object)) }
                if let object {
                    if before.updateValue(Array(object.values), forKey: ObjectIdentifier(object)) == nil { inMemory.append(object) }
                } else if notice.kind != .delete {
                    arrived[notice.entity, default: []].append(values)
                }
            }
        }

        // Rows in memory: read again (moved, changed or gone).
        for entity in whole { inMemory += registries[entity].all }
        try reread(inMemory)
        // Rows not in memory that loaded sets may now hold: read and attached.
        for (entity, keys) in arrived.sorted(by: { $0.key < $1.key }) where mayJoinLoadedSets(entity) {
            let nothing = [StoredValue](repeating: .null, count: tables[entity].columns.count)
            for object in try materialize(entity: entity, result: try rows(of: entity, keys: keys), rowsAreDistinct: false) {
                didChange(object, from: nothing)
            }
        }
        // Helper rows, and tables read whole: their loaded sets are loaded again.
        try reloadSets(touching: Set(notices.map(\.entity)), whole: whole)

        return named.map { entity, kind, key, object in
            var changed: [String] = []
            if kind == .update, let object, let old = before[ObjectIdentifier(object)] {
                changed = zip(tables[entity].layout.attributeKeys, zip(old, object.values)).compactMap { key, pair in
                    "\(pair.0)" == "\(pair.1)" ? nil : key
                }
            }
            return Change(entity: model.entities[entity].name, kind: kind, primaryKey: key.map(\.value), changedKeys: changed)
        }
    }

    /// Whether rows of `entity` can be members of a loaded set through their foreign key
    /// (a one-to-many, or a one-to-one whose key they hold).
    private func mayJoinLoadedSets(_ entity: Int) -> Bool {
        tables[entity].foreignKeys.contains { relationship, _ in
            loadedRelationships.contains(inverse(of: entity, relationship))
        }
    }

    /// Loads again the loaded sets that go through a helper among `touched`, and every
    /// loaded set whose members are of an entity in `whole`.
    private func reloadSets(touching touched: Set<Int>, whole: Set<Int>) throws {
        for address in loadedRelationships.sorted(by: { ($0.entity, $0.relationship) < ($1.entity, $1.relationship) }) {
            let owner = layout.entities[address.entity]
            guard owner.isToMany[address.relationship] else { continue }
            let helper = owner.helpers[address.relationship]
            let throughTouchedHelper = helper.map { touched.contains($0) } ?? false
            guard throughTouchedHelper || whole.contains(owner.targets[address.relationship]) else { continue }
            let owners = registries[address.entity].all.filter { !$0.isDeleted && $0.sets[address.relationship] != nil }
            if !owners.isEmpty { try load(relationship: address.relationship, for: owners) }
        }
    }
}
