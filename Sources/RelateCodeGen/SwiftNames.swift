/// How database names become Swift names: the rule the README states, deterministic and
/// local (a name depends only on the names it could clash with, so adding or removing an
/// unrelated table changes no other name).
///
/// 1. The name is split into words at every character that cannot be part of a Swift
///    identifier (`_`, `.`, space, `-`, punctuation; ASCII letters and digits and
///    non-ASCII letters and digits are kept); each word after the first starts with a
///    capital, the rest of a word is kept as written: `person_title_rel` → `PersonTitleRel`
///    (a type) and `personTitleRel` (a property), `book_by_authorId` → `bookByAuthorId`.
///    A first word written all in capitals is lowered whole for a property (`ID_card` →
///    `idCard`).
/// 2. A name that would start with a digit gets a leading `_` (`2fa` → `_2fa`); a name
///    with no letter or digit at all is `_` followed by the hexadecimal code points of its
///    characters (`?` → `_3F`).
/// 3. Swift keywords are written in backticks (a column `default` is the property written
///    with backticks around `default`; likewise `class`).
/// 4. Names the generated code itself uses are qualified: a type named like one of them
///    takes the suffix `Entity` (`Values` → `ValuesEntity`), a property the suffix `Column`
///    (an attribute) or `Relationship` (`object` → `objectColumn`).
/// 5. Two names that come out the same: the one spelled exactly as the Swift name (else
///    the first in the order of their bytes) keeps it; each other one is qualified with its own database name's characters, each character an
///    identifier cannot hold written `_` (`person_id` and `personId` → `personId` for
///    `personId`, `person_id` for `person_id`); when that still clashes, `_2`, `_3`…
///    follow, names already spelled as identifiers first, then in the order of their bytes.
public enum SwiftNames {
    /// The words of a database name, split at every character that cannot be part of an
    /// identifier.
    static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current = ""
        for scalar in name.unicodeScalars {
            if isIdentifierCharacter(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// ASCII letters and digits, and non-ASCII letters and digits in the ranges Swift
    /// identifiers accept (`identifier-head`, Swift book). Others split words.
    static func isIdentifierCharacter(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            return (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
        }
        guard scalar.properties.isAlphabetic || scalar.properties.numericType != nil else { return false }
        let value = scalar.value
        let ranges: [ClosedRange<UInt32>] = [
            0x00C0...0x00D6, 0x00D8...0x00F6, 0x00F8...0x00FF, 0x0100...0x02FF, 0x0370...0x167F, 0x1681...0x180D,
            0x180F...0x1DBF, 0x1E00...0x1FFF, 0x2070...0x20CF, 0x2C00...0x2DFF, 0x2E80...0x2FFF, 0x3040...0xD7FF,
            0xF900...0xFD3D, 0xFD40...0xFDCF, 0xFDF0...0xFE1F, 0xFE30...0xFE44, 0xFE47...0xFFFD,
        ]
        return ranges.contains { $0.contains(value) }
    }

    private static func capitalized(_ word: String) -> String {
        guard let first = word.first else { return word }
        return first.uppercased() + word.dropFirst()
    }

    private static func isAllUppercase(_ word: String) -> Bool {
        word.contains { $0.isLetter } && !word.contains { $0.isLowercase }
    }

    /// Rule 2: a name for a Swift identifier from `words` joined, or from the raw name
    /// when there are none.
    private static func finish(_ joined: String, raw: String) -> String {
        if joined.isEmpty {
            return "_" + raw.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined()
        }
        if let first = joined.unicodeScalars.first, first.properties.numericType != nil {
            return "_" + joined
        }
        return joined
    }

    /// A type name: `person_title_rel` → `PersonTitleRel`, `schema.table` → `SchemaTable`,
    /// without keyword escaping or qualification (see ``uniqueNames(for:reserved:suffix:camel:)``).
    ///
    /// - Parameter name: A table or key name as the model has it.
    /// - Returns: The type name.
    public static func upperCamel(_ name: String) -> String {
        finish(words(name).map(capitalized).joined(), raw: name)
    }

    /// A property name: `person_id` → `personId`, `book_by_authorId` → `bookByAuthorId`,
    /// without keyword escaping or qualification.
    ///
    /// - Parameter name: A column or key name as the model has it.
    /// - Returns: The property name.
    public static func lowerCamel(_ name: String) -> String {
        let parts = words(name)
        guard let first = parts.first else { return finish("", raw: name) }
        let head: String
        if isAllUppercase(first) {
            head = first.lowercased()
        } else {
            head = first.prefix(1).lowercased() + first.dropFirst()
        }
        return finish(head + parts.dropFirst().map(capitalized).joined(), raw: name)
    }

    /// The database name's own characters as an identifier (rule 5): every character an
    /// identifier cannot hold becomes `_`.
    static func verbatim(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars {
            result.unicodeScalars.append(isIdentifierCharacter(scalar) ? scalar : "_")
        }
        return finish(result.allSatisfy { $0 == "_" } ? "" : result, raw: name)
    }

    /// Unique Swift names for `names` (database names), by rules 1–5. The answer maps each
    /// database name to its Swift name, unescaped (see ``escaped(_:)``).
    ///
    /// - Parameters:
    ///   - names: the database names to name; duplicates are named once.
    ///   - reserved: Swift names the generated code uses itself.
    ///   - suffix: What qualifies a name that would be one of `reserved` (`Entity`, `Column`).
    ///   - camel: ``upperCamel(_:)`` or ``lowerCamel(_:)``.
    /// - Returns: the Swift name of each database name.
    public static func uniqueNames(
        for names: [String], reserved: Set<String>, suffix: String, camel: (String) -> String
    ) -> [String: String] {
        let sortedNames = Array(Set(names)).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var proposed: [String: String] = [:]
        for name in sortedNames {
            var candidate = camel(name)
            if reserved.contains(candidate) { candidate += suffix }
            proposed[name] = candidate
        }
        var groups: [String: [String]] = [:]
        for name in sortedNames { groups[proposed[name]!, default: []].append(name) }
        var result: [String: String] = [:]
        var taken = Set(proposed.values)
        for (swiftName, members) in groups.sorted(by: { $0.key < $1.key }) {
            if members.count == 1 {
                result[members[0]] = swiftName
                continue
            }
            // The member spelled exactly as its Swift name keeps it; the others take their
            // own spelling, made unique by a number where that still clashes.
            // (else the first by bytes)
            let keeper = members.first { $0 == swiftName } ?? members.first
            // Names already spelled as identifiers first, so that they keep their spelling.
            let ordered = members.filter { verbatim($0) == $0 } + members.filter { verbatim($0) != $0 }
            for member in ordered {
                if member == keeper {
                    result[member] = swiftName
                    continue
                }
                var base = verbatim(member)
                if reserved.contains(base) { base += suffix }
                var candidate = base
                var number = 2
                while taken.contains(candidate) {
                    candidate = "\(base)_\(number)"
                    number += 1
                }
                taken.insert(candidate)
                result[member] = candidate
            }
        }
        return result
    }

    /// Swift's keywords, which a name must be written in backticks to be.
    public static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func", "import",
        "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private", "precedencegroup", "protocol",
        "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
        "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
        "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try",
        "_", "Type", "Protocol", "some", "any",
    ]

    /// `name` as written in source: in backticks when it is a keyword.
    ///
    /// - Parameter name: An identifier.
    /// - Returns: The identifier, in backticks when it is a Swift keyword.
    public static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// `name` as an argument label at a call: a keyword is one without backticks.
    ///
    /// - Parameter name: An identifier.
    /// - Returns: The identifier as it is: a keyword needs no backticks as a label.
    public static func label(_ name: String) -> String {
        name
    }

    /// A string literal of `text`, escaped for Swift source.
    ///
    /// - Parameter text: Any text.
    /// - Returns: A Swift string literal, quotes included, whose value is `text`.
    public static func literal(_ text: String) -> String {
        literal(text, escapingNonASCII: false)
    }

    /// ``literal(_:)`` with every scalar past ASCII written `\u{…}`: the literal's scalars
    /// then survive an editor that normalizes the source's Unicode.
    static func asciiLiteral(_ text: String) -> String {
        literal(text, escapingNonASCII: true)
    }

    private static func literal(_ text: String, escapingNonASCII: Bool) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (escapingNonASCII && scalar.value > 0x7F) {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
