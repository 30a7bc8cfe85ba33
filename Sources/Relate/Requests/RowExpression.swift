import Foundation
import RelatePostgres

/// A value that a write by condition computes from each row it changes, on the server:
/// `Key("score") + 1`, `Key("price") * 1.1`, ``now``. Built as a value, like a
/// ``Condition``: keys become quoted columns of the row, other values are bound, typed as the
/// column they are computed with.
///
/// ```swift
/// try context.update("player", where: Key("team") == "red", values: [
///     "score": Key("score") + 10,
///     "updated": RowExpression.now,
///     "nickname": Key("nickname") + "!",      // text is concatenated (||)
/// ])
/// ```
///
/// A key names an attribute of the entity written (no key path through a relationship).
/// Arithmetic follows PostgreSQL's operators for the columns' types; `+` of a text column is
/// concatenation. A context that does not autocommit cannot compute an expression in memory,
/// so it refuses one (``RelateError/Kind-swift.struct/invalidWrite``).
public struct RowExpression: Sendable {
    indirect enum Node: Sendable {
        case key(String)
        case value((any Sendable)?)
        case arithmetic(Operator, Node, Node)
        case now
    }

    enum Operator: String, Sendable {
        case add = "+", subtract = "-", multiply = "*", divide = "/"
    }

    let node: Node

    init(_ node: Node) {
        self.node = node
    }

    /// The time the transaction started (`now()`): every row of one write gets the same.
    public static let now = RowExpression(.now)

    /// The row's value at `key`: writes one column's value into another.
    ///
    /// - Parameter key: An attribute of the entity written.
    /// - Returns: The expression.
    public static func value(of key: Key) -> RowExpression {
        RowExpression(.key(key.path))
    }

    /// A value given as an operand: a ``Key`` is the row's column, a `RowExpression` its node,
    /// anything else a bound value.
    static func operand(_ value: (any Sendable)?) -> Node {
        switch value {
        case let key as Key: .key(key.path)
        case let expression as RowExpression: expression.node
        default: .value(value)
        }
    }
}

extension RowExpression.Node {
    /// The first key the expression reads, depth first: the attribute whose type types the
    /// values bound beside it.
    var typingKey: String? {
        switch self {
        case .key(let path): path
        case .value, .now: nil
        case .arithmetic(_, let left, let right): left.typingKey ?? right.typingKey
        }
    }
}

// MARK: - Operators

/// What may stand beside a ``Key`` or a ``RowExpression`` in an expression: another key or
/// expression, or a value of a type a column holds. A protocol of its own, so that `+`
/// between a string literal and other text stays Swift's own.
public protocol RowOperand: Sendable {}

extension Key: RowOperand {}
extension RowExpression: RowOperand {}
extension Int: RowOperand {}
extension Int16: RowOperand {}
extension Int32: RowOperand {}
extension Int64: RowOperand {}
extension Double: RowOperand {}
extension Float: RowOperand {}
extension Decimal: RowOperand {}
extension String: RowOperand {}
extension Date: RowOperand {}
extension PostgresInterval: RowOperand {}

extension Key {
    /// The row's value at `key` plus `value` (`||` for text).
    ///
    /// - Parameters:
    ///   - key: An attribute of the entity written.
    ///   - value: A value, another ``Key`` or a ``RowExpression``.
    /// - Returns: The expression.
    public static func + (key: Key, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.add, .key(key.path), RowExpression.operand(value)))
    }

    /// The row's value at `key` minus `value`.
    ///
    /// - Parameters:
    ///   - key: An attribute of the entity written.
    ///   - value: A value, another ``Key`` or a ``RowExpression``.
    /// - Returns: The expression.
    public static func - (key: Key, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.subtract, .key(key.path), RowExpression.operand(value)))
    }

    /// The row's value at `key` times `value`.
    ///
    /// - Parameters:
    ///   - key: An attribute of the entity written.
    ///   - value: A value, another ``Key`` or a ``RowExpression``.
    /// - Returns: The expression.
    public static func * (key: Key, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.multiply, .key(key.path), RowExpression.operand(value)))
    }

    /// The row's value at `key` divided by `value` (integer division for integer columns, as
    /// in PostgreSQL).
    ///
    /// - Parameters:
    ///   - key: An attribute of the entity written.
    ///   - value: A value, another ``Key`` or a ``RowExpression``.
    /// - Returns: The expression.
    public static func / (key: Key, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.divide, .key(key.path), RowExpression.operand(value)))
    }
}

extension RowExpression {
    /// `expression` plus `value` (`||` for text).
    ///
    /// - Parameters:
    ///   - expression: An expression.
    ///   - value: A value, a ``Key`` or another expression.
    /// - Returns: The expression.
    public static func + (expression: RowExpression, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.add, expression.node, operand(value)))
    }

    /// `expression` minus `value`.
    ///
    /// - Parameters:
    ///   - expression: An expression.
    ///   - value: A value, a ``Key`` or another expression.
    /// - Returns: The expression.
    public static func - (expression: RowExpression, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.subtract, expression.node, operand(value)))
    }

    /// `expression` times `value`.
    ///
    /// - Parameters:
    ///   - expression: An expression.
    ///   - value: A value, a ``Key`` or another expression.
    /// - Returns: The expression.
    public static func * (expression: RowExpression, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.multiply, expression.node, operand(value)))
    }

    /// `expression` divided by `value`.
    ///
    /// - Parameters:
    ///   - expression: An expression.
    ///   - value: A value, a ``Key`` or another expression.
    /// - Returns: The expression.
    public static func / (expression: RowExpression, value: some RowOperand) -> RowExpression {
        RowExpression(.arithmetic(.divide, expression.node, operand(value)))
    }
}
