extension String {
    /// Whether the two are the same bytes, as the server compares text (under a
    /// deterministic collation, the default). Swift's `==` compares by canonical
    /// equivalence: a composed `é` and a decomposed one are equal to it, and two keys, two
    /// values or two tenants to the server.
    func hasSameBytes(as other: String) -> Bool {
        utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8)
    }
}

extension Optional<String> {
    /// Both `nil`, or both the same bytes (``Swift/String/hasSameBytes(as:)``).
    func hasSameBytes(as other: String?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let left?, let right?): left.hasSameBytes(as: right)
        default: false
        }
    }
}
