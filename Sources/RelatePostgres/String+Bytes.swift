import Foundation

extension String {
    /// Whether the two are the same bytes, as the server compares text (under a
    /// deterministic collation, the default). Swift's `==` compares by canonical
    /// equivalence: a composed `é` and a decomposed one are equal to it, and two keys, two
    /// values or two tenants to the server.
    ///
    /// One `memcmp` over each string's own storage, none when both are the same storage.
    /// Walking the two `utf8` views byte by byte took 5 % of Relate's CPU under
    /// `scripts/live-scaling` (rows moving, 1,000 a second), in the lookups of prepared
    /// statements whose texts are kilobytes long.
    package func hasSameBytes(as other: String) -> Bool {
        // Copies share the storage: `withUTF8` makes a bridged or foreign string
        // contiguous in its copy alone.
        var (left, right) = (self, other)
        return left.withUTF8 { left in
            right.withUTF8 { right in
                guard left.count == right.count else { return false }
                guard let a = left.baseAddress, let b = right.baseAddress, a != b else { return true }
                return memcmp(a, b, left.count) == 0
            }
        }
    }
}

extension Optional<String> {
    /// Both `nil`, or both the same bytes (``Swift/String/hasSameBytes(as:)``).
    package func hasSameBytes(as other: String?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let left?, let right?): left.hasSameBytes(as: right)
        default: false
        }
    }
}

/// Texts told apart from others by their bytes (``Swift/String/hasSameBytes(as:)``), for a
/// set or a dictionary: a row's key in its text forms (as a change feed sends it), where
/// the keys of two rows that Swift's `==` takes for one collapsed into one and the change
/// of the other row went untested; the names a principal sets. (Here, under Relate's own
/// libpq layer, so that the connection's statements are told apart by it too.)
package struct ExactTexts: Hashable, Sendable {
    package let texts: [String?]

    package init(_ texts: [String?]) {
        self.texts = texts
    }

    package static func == (left: ExactTexts, right: ExactTexts) -> Bool {
        left.texts.count == right.texts.count && zip(left.texts, right.texts).allSatisfy { $0.hasSameBytes(as: $1) }
    }

    /// `String`'s own hash: coarser than the bytes (equal for a composed and a decomposed
    /// `é`), so equal keys hash alike.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(texts)
    }
}
