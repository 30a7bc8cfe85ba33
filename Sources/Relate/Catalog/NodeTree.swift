/// PostgreSQL's text form of a parse tree (`pg_node_tree`, what `pg_rewrite.ev_action` holds
/// for a view's query): `{NAME :field value …}` nodes, `( … )` lists, `<>` for NULL, any other
/// token as written, a backslash making the next character part of the token. Relate reads
/// a view's rule with it to follow the view's columns to the tables they come from; the
/// format is the server's internal one, so whatever does not read as expected is no tree
/// (`nil`), and the view is taken to have no lineage rather than a wrong one.
indirect enum NodeTree: Hashable {
    /// `{NAME :field value …}`; a field followed by several values (a constant's bytes) holds them as a list.
    case node(String, [String: NodeTree])
    /// `( … )`: a list of nodes, or of numbers after a tag (`(i 1 2)`, `(b 3)`).
    case list([NodeTree])
    /// Any other token: a number, a name, `true`.
    case token(String)
    /// `<>`: no value.
    case null

    /// Deeper than this is taken as unreadable, so a huge expression cannot exhaust the stack.
    static let depthLimit = 400

    /// The tree `text` spells, or `nil` when it is not one.
    ///
    /// - Parameters:
    ///   - text: A `pg_node_tree` as text.
    ///   - fields: The node fields to read; the others are skipped without being built (a
    ///     view's rule is mostly fields Relate does not need). `nil` reads every field.
    /// - Returns: The tree, or `nil`.
    static func parse(_ text: String, fields: Set<String>? = nil) -> NodeTree? {
        var parser = Parser(bytes: Array(text.utf8), fields: fields)
        guard let tree = parser.value(depth: 0) else { return nil }
        parser.skipSpace()
        return parser.position == parser.bytes.count ? tree : nil
    }

    /// The node's name (`QUERY`, `VAR`); `nil` for anything else.
    var name: String? {
        if case .node(let name, _) = self { return name }
        return nil
    }

    /// A node's field; `nil` when this is not a node or has no such field.
    subscript(field: String) -> NodeTree? {
        if case .node(_, let fields) = self { return fields[field] }
        return nil
    }

    /// A token read as an integer.
    var int: Int? {
        if case .token(let text) = self { return Int(text) }
        return nil
    }

    /// A token read as a Boolean.
    var bool: Bool? {
        if case .token(let text) = self { return text == "true" ? true : text == "false" ? false : nil }
        return nil
    }

    /// The token's text.
    var text: String? {
        if case .token(let text) = self { return text }
        return nil
    }

    /// A list's items; none for `<>`.
    var items: [NodeTree] {
        if case .list(let items) = self { return items }
        return []
    }

    /// Whether the field holds something (not `<>`): a `GROUP BY`, a `DISTINCT` clause.
    var isPresent: Bool {
        if case .null = self { return false }
        return true
    }

    /// Reads the text as the server's `pg_strtok` splits it: whitespace separates, each of
    /// `(){}` is a token of its own, a backslash takes the next character into the word.
    private struct Parser {
        let bytes: [UInt8]
        let fields: Set<String>?
        var position = 0

        private static let open: UInt8 = 0x28, close: UInt8 = 0x29, openBrace: UInt8 = 0x7B, closeBrace: UInt8 = 0x7D
        private static let backslash: UInt8 = 0x5C, colon: UInt8 = 0x3A

        private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
        private static func isBracket(_ byte: UInt8) -> Bool { byte == open || byte == close || byte == openBrace || byte == closeBrace }

        mutating func skipSpace() {
            while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
        }

        /// The byte at the next token, whitespace skipped.
        private mutating func next() -> UInt8? {
            skipSpace()
            return position < bytes.count ? bytes[position] : nil
        }

        /// Reads a word, unescaped; `escaped` when it began with a backslash (so `\<>` is a string).
        private mutating func word() -> (text: String, escaped: Bool) {
            var text: [UInt8] = []
            let escaped = position < bytes.count && bytes[position] == Self.backslash
            while position < bytes.count, !Self.isSpace(bytes[position]), !Self.isBracket(bytes[position]) {
                if bytes[position] == Self.backslash, position + 1 < bytes.count { position += 1 }
                text.append(bytes[position])
                position += 1
            }
            return (String(decoding: text, as: UTF8.self), escaped)
        }

        /// Passes over one value without building it; `false` when the text ends or closes first.
        private mutating func skipValue() -> Bool {
            guard let first = next(), first != Self.close, first != Self.closeBrace else { return false }
            var closers: [UInt8] = []
            repeat {
                guard position < bytes.count else { return false }
                let byte = bytes[position]
                position += 1
                switch byte {
                case Self.open: closers.append(Self.close)
                case Self.openBrace: closers.append(Self.closeBrace)
                case Self.close, Self.closeBrace:
                    guard closers.popLast() == byte else { return false }
                default:
                    if byte == Self.backslash { position += 1 }
                    // A word outside brackets ends at whitespace or a bracket (an escaped
                    // one may hold a colon that begins no field: `\1:a`).
                    if closers.isEmpty {
                        while position < bytes.count, !Self.isSpace(bytes[position]), !Self.isBracket(bytes[position]) {
                            position += bytes[position] == Self.backslash ? 2 : 1
                        }
                    }
                }
            } while !closers.isEmpty
            position = min(position, bytes.count)
            return true
        }

        /// Whether the next token names a field (`:name`: a word that begins with a colon,
        /// which an escaped word never does).
        private mutating func atField() -> Bool {
            next() == Self.colon
        }

        mutating func value(depth: Int) -> NodeTree? {
            guard depth < NodeTree.depthLimit, let byte = next() else { return nil }
            switch byte {
            case Self.open:
                position += 1
                var items: [NodeTree] = []
                while next() != Self.close {
                    guard let item = value(depth: depth + 1) else { return nil }
                    items.append(item)
                }
                position += 1
                return .list(items)
            case Self.openBrace:
                position += 1
                guard let start = next(), !Self.isBracket(start) else { return nil }
                let name = word().text
                var values: [String: NodeTree] = [:]
                while next() != Self.closeBrace {
                    guard atField() else { return nil }
                    let field = String(word().text.dropFirst())
                    let wanted = fields?.contains(field) ?? true
                    var read: [NodeTree] = []
                    while let byte = next(), byte != Self.colon, byte != Self.closeBrace {
                        if wanted {
                            guard let item = value(depth: depth + 1) else { return nil }
                            read.append(item)
                        } else {
                            guard skipValue() else { return nil }
                        }
                    }
                    guard position < bytes.count else { return nil }
                    // A later field of the same name wins: a column named like a field
                    // (`:resorigcol`) comes before the real one in a target entry.
                    if wanted { values[field] = read.count == 1 ? read[0] : read.isEmpty ? .null : .list(read) }
                }
                position += 1
                return .node(name, values)
            case Self.close, Self.closeBrace:
                return nil
            default:
                let (text, escaped) = word()
                return !escaped && text == "<>" ? .null : .token(text)
            }
        }
    }
}
