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
    /// - Parameter text: A `pg_node_tree` as text.
    /// - Returns: The tree, or `nil`.
    static func parse(_ text: String) -> NodeTree? {
        var parser = Parser(tokens: tokenize(Array(text.utf8)))
        guard let tree = parser.value(depth: 0), parser.position == parser.tokens.count else { return nil }
        return tree
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

    private enum Token: Hashable {
        case open(UInt8), close(UInt8)
        /// A word, unescaped; `escaped` when it began with a backslash (so `\<>` is a string).
        case word(String, escaped: Bool)
    }

    /// Tokens as the server's `pg_strtok` splits them: whitespace separates, each of `(){}`
    /// is a token of its own, a backslash takes the next character into the word.
    private static func tokenize(_ bytes: [UInt8]) -> [Token] {
        var tokens: [Token] = []
        var index = 0
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
        func isBracket(_ byte: UInt8) -> Bool { byte == 0x28 || byte == 0x29 || byte == 0x7B || byte == 0x7D }
        while index < bytes.count {
            let byte = bytes[index]
            if isSpace(byte) {
                index += 1
            } else if byte == 0x28 || byte == 0x7B {
                tokens.append(.open(byte))
                index += 1
            } else if byte == 0x29 || byte == 0x7D {
                tokens.append(.close(byte))
                index += 1
            } else {
                var word: [UInt8] = []
                let escaped = byte == 0x5C
                while index < bytes.count, !isSpace(bytes[index]), !isBracket(bytes[index]) {
                    if bytes[index] == 0x5C, index + 1 < bytes.count { index += 1 }
                    word.append(bytes[index])
                    index += 1
                }
                tokens.append(.word(String(decoding: word, as: UTF8.self), escaped: escaped))
            }
        }
        return tokens
    }

    private struct Parser {
        let tokens: [Token]
        var position = 0

        /// Whether the token at `position` names a field (`:name`).
        private func atField() -> Bool {
            guard position < tokens.count, case .word(let word, false) = tokens[position] else { return false }
            return word.hasPrefix(":")
        }

        private func atClose(_ byte: UInt8) -> Bool {
            position < tokens.count && tokens[position] == .close(byte)
        }

        mutating func value(depth: Int) -> NodeTree? {
            guard depth < NodeTree.depthLimit, position < tokens.count else { return nil }
            let token = tokens[position]
            position += 1
            switch token {
            case .word(let word, let escaped):
                return !escaped && word == "<>" ? .null : .token(word)
            case .close:
                return nil
            case .open(0x28):
                var items: [NodeTree] = []
                while !atClose(0x29) {
                    guard let item = value(depth: depth + 1) else { return nil }
                    items.append(item)
                }
                position += 1
                return .list(items)
            case .open:
                guard position < tokens.count, case .word(let name, _) = tokens[position] else { return nil }
                position += 1
                var fields: [String: NodeTree] = [:]
                while !atClose(0x7D) {
                    guard atField(), case .word(let field, _) = tokens[position] else { return nil }
                    position += 1
                    var values: [NodeTree] = []
                    while !atField(), !atClose(0x7D) {
                        guard let item = value(depth: depth + 1) else { return nil }
                        values.append(item)
                    }
                    // A later field of the same name wins: a column named like a field
                    // (`:resorigcol`) comes before the real one in a target entry.
                    fields[String(field.dropFirst())] = values.count == 1 ? values[0] : values.isEmpty ? .null : .list(values)
                }
                position += 1
                return .node(name, fields)
            }
        }
    }
}
