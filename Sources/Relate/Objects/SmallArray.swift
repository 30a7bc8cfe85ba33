/// A list that holds one element inline and more in an array: the columns of a write, the
/// values before and after it, a primary key.
///
/// Most writes change one column of a row with a one-column key, and a `save()` of 1,000
/// such writes made, kept and freed about six arrays for each (the effect's columns and
/// values, the values held before, the key): freeing them alone was over a quarter of its
/// client instructions (Benchmarks/README.md, "Editing"). One element needs no allocation here.
enum SmallArray<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
    case one(Element)
    /// No element, or more than one (never exactly one: see ``init(_:)``).
    case array([Element])

    /// The elements of `array`, one of them inline.
    init(_ array: [Element]) {
        self = array.count == 1 ? .one(array[0]) : .array(array)
    }

    init(arrayLiteral elements: Element...) {
        self.init(elements)
    }

    var startIndex: Int { 0 }

    var endIndex: Int {
        switch self {
        case .one: 1
        case .array(let array): array.count
        }
    }

    subscript(position: Int) -> Element {
        switch self {
        case .one(let element):
            precondition(position == 0, "SmallArray index out of range")
            return element
        case .array(let array):
            return array[position]
        }
    }

    /// Appends `element`: the second element moves both into an array.
    mutating func append(_ element: Element) {
        switch self {
        case .one(let first):
            self = .array([first, element])
        case .array(var array):
            guard !array.isEmpty else {
                self = .one(element)
                return
            }
            // Let go of the payload first, so that the array is grown in place.
            self = .array([])
            array.append(element)
            self = .array(array)
        }
    }

    /// The elements transformed, in a small array too.
    func smallMap<T>(_ transform: (Element) throws -> T) rethrows -> SmallArray<T> {
        switch self {
        case .one(let element): .one(try transform(element))
        case .array(let array): SmallArray<T>(try array.map(transform))
        }
    }

    /// The elements `isIncluded` keeps, in a small array too.
    func smallFilter(_ isIncluded: (Element) throws -> Bool) rethrows -> SmallArray<Element> {
        switch self {
        case .one(let element): try isIncluded(element) ? self : .array([])
        case .array(let array): SmallArray(try array.filter(isIncluded))
        }
    }
}

extension SmallArray: Sendable where Element: Sendable {}
