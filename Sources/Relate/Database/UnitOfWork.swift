/// One unit of work as a value: whether it reads or writes, who it runs as, and where it
/// may run. Every unit a ``Database`` runs — `read`, `write`, a live query's reads and its
/// decisions — is one of these, and takes the same path (``Database/run(_:_:)``); the
/// statements that open its transaction are built by ``Statements/opening(of:learnsTransactionID:learnsCommitPosition:)``.
struct UnitOfWork: Sendable {
    enum Access: Sendable {
        case read, write
    }

    /// Where a read may run.
    enum Replicas: Sendable {
        /// On a replica that has replayed the last write of this `Database` (``Database/read(_:)``).
        case allowed
        /// On the primary: a live query's reads follow the primary's change feed, which a
        /// lagging replica may not have replayed yet.
        case primaryOnly
    }

    var access: Access
    /// Who the unit runs as; `nil`: the pool's own role, no setting.
    var principal: Principal?
    var replicas: Replicas
    /// A write whose statements each commit by themselves
    /// (``Database/writeWithoutTransaction(_:)``).
    private var autocommits = false

    init(_ access: Access, as principal: Principal? = nil, replicas: Replicas = .allowed) {
        self.access = access
        self.principal = principal
        self.replicas = access == .write ? .primaryOnly : replicas
    }

    /// A write on the primary as the pool's own role, outside any transaction.
    static var writeWithoutTransaction: UnitOfWork {
        var unit = UnitOfWork(.write)
        unit.autocommits = true
        return unit
    }

    /// The span the unit is traced as.
    var spanName: String { access == .read ? "relate.read" : "relate.write" }

    /// Whether the unit is one transaction: a write unless it autocommits, a read when it
    /// runs as a principal (its role and settings live as long as the transaction).
    var isTransaction: Bool { (access == .write && !autocommits) || principal != nil }
}
