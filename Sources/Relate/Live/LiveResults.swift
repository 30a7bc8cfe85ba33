import Observation

/// A fetch request's answer that stays current: after every write of its context and every
/// ``DatabaseContext/processChanges()`` that touches what the request reads, ``objects``
/// is again the request's answer — rows that come to match join, rows that stop matching
/// leave, the order and the limit hold — and ``lastDifference`` says what changed, by index
/// and by primary key, as `NSFetchedResultsController` does, so that a list can animate.
///
/// ```swift
/// let hoppers = try context.liveFetch(FetchRequest("person", where: Key("surname") == "Hopper"))
/// try hoppers.objects                  // [grace]
/// try context.insert("person", values: ["firstname": "Ann", "surname": "Hopper"])
/// try hoppers.objects                  // [grace, ann]
/// hoppers.lastDifference.inserted      // [index 1, primary key [3]]
/// ```
///
/// `LiveResults` is `Observable`: reading ``objects`` inside `withObservationTracking` (or a
/// SwiftUI view) registers it, and the `onChange` fires when a change to the request's
/// region (the tables its condition, joins and sort order read) makes the answer stale — a
/// write of the context, a change another client committed once processed, a refresh, a
/// roll-back — and for nothing outside that region.
///
/// The answer is brought up to date when next read: one query, however many changes came
/// in between (they show as one difference). A change outside the region sends nothing.
///
/// Observation tells of a change as it is made (`willSet`), while the context is changing
/// memory: an `onChange` handler must not use the context itself. Schedule the work that
/// reads the new answer (as SwiftUI does when it re-renders) instead of doing it there.
public final class LiveResults: Observable {
    /// The request whose answer this is.
    public let request: FetchRequest
    private weak var context: DatabaseContext?
    /// The answer as last read.
    private var current: [DatabaseObject]
    /// The region changed since the answer was read.
    private var isStale = false
    /// The answer is being read: changes it reveals are already in it.
    private var isEvaluating = false
    private var difference = Difference()
    private let registrar = ObservationRegistrar()

    init(request: FetchRequest, context: DatabaseContext, objects: [DatabaseObject]) {
        self.request = request
        self.context = context
        current = objects
    }

    /// The request's answer now: read again first (one query) when something in its region
    /// changed since it was last read.
    ///
    /// - Throws: ``RelateError`` when the answer cannot be read again (the connection is
    ///   lost, the context is gone); the answer last read stays.
    public var objects: [DatabaseObject] {
        get throws {
            registrar.access(self, keyPath: \.current)
            try updateIfStale()
            return current
        }
    }

    /// What the last update changed: the rows that joined, left or moved, by index in the
    /// answers before and after and by primary key. Empty until the answer first changes.
    public var lastDifference: Difference {
        registrar.access(self, keyPath: \.difference)
        try? updateIfStale()
        return difference
    }

    /// Whether the answer will be read again when next asked for.
    public var needsUpdate: Bool { isStale }

    /// Rows in the region changed: the answer is stale, and observers are told.
    func regionChanged() {
        guard !isStale, !isEvaluating else { return }
        registrar.willSet(self, keyPath: \.current)
        registrar.willSet(self, keyPath: \.difference)
        isStale = true
        registrar.didSet(self, keyPath: \.current)
        registrar.didSet(self, keyPath: \.difference)
    }

    private func updateIfStale() throws {
        guard isStale else { return }
        guard let context else {
            throw RelateError(kind: .invalidObject, message: "the DatabaseContext of these live results is gone", entity: request.entity)
        }
        isEvaluating = true
        defer { isEvaluating = false }
        let fresh = try context.fetch(request)
        isStale = false
        difference = Difference(from: current, to: fresh)
        current = fresh
    }

    /// How one answer became the next: every row that joined, left or moved.
    public struct Difference: Sendable {
        /// A row at `index` (in the answer after, for a row that joined; before, for one that
        /// left), and its primary key.
        public struct Row: Sendable {
            /// The row's index: in the answer after, for a row that joined; before, for one that left.
            public var index: Int
            /// The row's primary key values.
            public var primaryKey: [(any Sendable)?]
        }

        /// A row that stayed but moved from one index to another.
        public struct Move: Sendable {
            /// The row's index in the answer before.
            public var from: Int
            /// The row's index in the answer after.
            public var to: Int
            /// The row's primary key values.
            public var primaryKey: [(any Sendable)?]
        }

        /// Rows that joined the answer, by their index in it, in increasing order.
        public var inserted: [Row] = []
        /// Rows that left, by their index in the answer before, in increasing order.
        public var removed: [Row] = []
        /// Rows that are in both answers but moved. Taking out of the old answer the rows at
        /// `removed` and at the moves' `from` indexes, then putting in, by increasing index,
        /// the rows at `inserted` and at the moves' `to` indexes, gives the new answer.
        public var moved: [Move] = []
        /// Rows in both answers whose values changed, by their index in the answer after, in
        /// increasing order (a row that moved may be here too): what a consumer of
        /// ``Database/observe(_:)`` sends on without comparing the rows itself. A context's
        /// ``LiveResults`` leaves it empty: its objects change in place, and Observation tells.
        public var updated: [Row] = []

        /// Nothing joined, left, moved or changed.
        public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && moved.isEmpty && updated.isEmpty }

        init() {}

        init(from old: [DatabaseObject], to new: [DatabaseObject]) {
            // The identity map gives a row one object: identities tell rows apart.
            self.init(from: old.map(ObjectIdentifier.init), to: new.map(ObjectIdentifier.init)) { old[$0].primaryKey } newKey: { new[$0].primaryKey }
        }

        /// The difference between two answers whose rows `identity` tells apart (a row whose
        /// identity an earlier row of its answer has is taken as another row): the rows of
        /// both answers in the longest run they keep in the same order stay, the other rows
        /// of both moved, the rest left or joined. `oldKey` and `newKey` give the primary
        /// key of the row at an index of each.
        ///
        /// Written for identities, not through the standard library's
        /// `difference(from:).inferringMoves()`: over `AnyHashable` its unspecialized code
        /// looked up type metadata at every step, about 20 µs for two answers of ten rows
        /// (Benchmarks/README.md, "The difference of two answers without the standard
        /// library's").
        init<Identity: Hashable>(
            from old: [Identity], to new: [Identity], oldKey: (Int) -> [(any Sendable)?], newKey: (Int) -> [(any Sendable)?]
        ) {
            var before: [Identity: Int] = [:]
            before.reserveCapacity(old.count)
            for (index, identity) in old.enumerated() where before[identity] == nil { before[identity] = index }
            // For each row of the old answer, its index in the new one (-1: it left).
            var after = [Int](repeating: -1, count: old.count)
            for (index, identity) in new.enumerated() {
                if let earlier = before[identity], after[earlier] == -1 {
                    after[earlier] = index
                } else {
                    inserted.append(Row(index: index, primaryKey: newKey(index)))
                }
            }
            // The rows that stay: the longest run of rows in both whose new indexes increase
            // in their old order (patience sorting: `tails[k]` ends the best run of k + 1 rows
            // found so far, `previous` links each row to the one before it in its run).
            var tails: [Int] = []
            var previous = [Int](repeating: -1, count: old.count)
            for (index, target) in after.enumerated() where target >= 0 {
                var (low, high) = (0, tails.count)
                while low < high {
                    let middle = (low + high) / 2
                    if after[tails[middle]] < target { low = middle + 1 } else { high = middle }
                }
                if low > 0 { previous[index] = tails[low - 1] }
                if low == tails.count { tails.append(index) } else { tails[low] = index }
            }
            var stays = [Bool](repeating: false, count: old.count)
            var index = tails.last ?? -1
            while index >= 0 {
                stays[index] = true
                index = previous[index]
            }
            for (index, target) in after.enumerated() {
                if target < 0 {
                    removed.append(Row(index: index, primaryKey: oldKey(index)))
                } else if !stays[index] {
                    moved.append(Move(from: index, to: target, primaryKey: newKey(target)))
                }
            }
            moved.sort { $0.to < $1.to }
        }
    }
}

@available(*, unavailable, message: "live results belong to their DatabaseContext, which is not thread-safe")
extension LiveResults: Sendable {}
