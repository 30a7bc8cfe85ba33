import Foundation

/// Equality as a round trip has to keep it, which is not always `==`: any NaN is the same as
/// any other, while +0 and -0 differ (both forms keep the sign); a `Decimal` is its number
/// (1.50 is 1.5); a `Date` is as close as its `Double` can be.
public protocol SameValue {
    func isSame(as other: Self) -> Bool
    /// The value as a finding shows it.
    var shown: String { get }
}

extension SameValue {
    public var shown: String { "\(self)" }
}

extension SameValue where Self: Equatable {
    public func isSame(as other: Self) -> Bool { self == other }
}

extension Int: SameValue {}
extension Int32: SameValue {}
extension Int16: SameValue {}
extension Bool: SameValue {}
extension String: SameValue {}
extension Data: SameValue {}
extension UUID: SameValue {}

extension Double: SameValue {
    public func isSame(as other: Double) -> Bool {
        bitPattern == other.bitPattern || (isNaN && other.isNaN)
    }
}

extension Float: SameValue {
    public func isSame(as other: Float) -> Bool {
        bitPattern == other.bitPattern || (isNaN && other.isNaN)
    }
}

extension Decimal: SameValue {
    public func isSame(as other: Decimal) -> Bool {
        (isNaN && other.isNaN) || self == other
    }
}

extension Date: SameValue {
    /// PostgreSQL counts microseconds; a `Date` is a `Double` of seconds, which more than a
    /// century or so away from 2001 cannot hold every microsecond, so a value written and
    /// read back may move by an ulp or two; the text form also rounds to the microsecond.
    public func isSame(as other: Date) -> Bool {
        let seconds = timeIntervalSince1970, otherSeconds = other.timeIntervalSince1970
        if seconds == otherSeconds { return true }
        return abs(seconds - otherSeconds) <= 1e-6 + 4 * max(seconds.ulp, otherSeconds.ulp)
    }

    /// `Date.description` gives up on the far past and future that the fuzzer reaches.
    public var shown: String { "Date(timeIntervalSince1970: \(timeIntervalSince1970))" }
}

extension Optional: SameValue where Wrapped: SameValue {
    public func isSame(as other: Wrapped?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case let (value?, otherValue?): value.isSame(as: otherValue)
        default: false
        }
    }

    public var shown: String { map(\.shown) ?? "nil" }
}

extension Array: SameValue where Element: SameValue {
    public func isSame(as other: [Element]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.isSame(as: $1) }
    }

    public var shown: String { "[" + map(\.shown).joined(separator: ", ") + "]" }
}
