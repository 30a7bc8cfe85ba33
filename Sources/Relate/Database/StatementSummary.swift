/// What OpenTelemetry's database conventions want to know of a statement, read from its
/// SQL: the operation (`SELECT`, `INSERT`, …) and the table it is on (`db.collection.name`),
/// whence the span's name, `"<operation> <table>"`. Read from the tokens at the statement's
/// top level, skipping string literals and quoted names, so `WITH … SELECT` is a `SELECT`
/// and a subquery's `FROM` is not the statement's.
struct StatementSummary: Equatable {
    /// `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `MERGE`, or the first word otherwise
    /// (`BEGIN`, `COMMIT`, `SET`); `nil` for an empty statement.
    var operation: String?
    /// The table, as the SQL names it, quotes taken off (`public.person`); `nil` when the
    /// statement names none at its top level.
    var collection: String?

    /// The span's name: OpenTelemetry's `"<operation> <table>"`, the operation alone when
    /// no table is named, `postgresql` when not even that.
    var spanName: String {
        guard let operation else { return "postgresql" }
        return collection.map { "\(operation) \($0)" } ?? operation
    }

    /// The statements whose name is a clause's table.
    private static let dataOperations: Set<String> = ["SELECT", "INSERT", "UPDATE", "DELETE", "MERGE"]

    init(operation: String?, collection: String?) {
        self.operation = operation
        self.collection = collection
    }

    /// Reads `sql`'s operation and table.
    init(sql: String) {
        let tokens = Self.topLevelTokens(sql)
        var start = 0
        if tokens.first?.keyword == "WITH" {
            // The operation after the common table expressions (each in parentheses).
            start = tokens.firstIndex { $0.keyword.map(Self.dataOperations.contains) ?? false } ?? 0
        }
        guard start < tokens.count, let operation = tokens[start].keyword else {
            self.init(operation: nil, collection: nil)
            return
        }
        let rest = Array(tokens[(start + 1)...])
        let table: String?
        switch operation {
        case "INSERT", "MERGE": table = Self.name(after: "INTO", in: rest)
        case "UPDATE": table = Self.name(at: 0, in: rest)
        case "DELETE", "SELECT": table = Self.name(after: "FROM", in: rest)
        default: table = nil
        }
        self.init(operation: operation, collection: table)
    }

    /// A word or name outside parentheses: `FROM`, `person`, `"public"."person"` (quotes
    /// taken off, parts joined by dots).
    private struct Token {
        var text = ""
        var isQuotedOrQualified = false
        /// A parenthesized part (a subquery, a column list, arguments), which names no table.
        var isGroup = false
        /// The token as a keyword: a bare word, upper-cased.
        var keyword: String? { isQuotedOrQualified || isGroup ? nil : text.uppercased() }
    }

    /// The name after the first `keyword` (`ONLY` skipped).
    private static func name(after keyword: String, in tokens: [Token]) -> String? {
        guard let index = tokens.firstIndex(where: { $0.keyword == keyword }) else { return nil }
        return name(at: index + 1, in: tokens)
    }

    /// The name at `index` (`ONLY` skipped); `nil` when there is none (a subquery comes next).
    private static func name(at index: Int, in tokens: [Token]) -> String? {
        var index = index
        if index < tokens.count, tokens[index].keyword == "ONLY" { index += 1 }
        return index < tokens.count && !tokens[index].isGroup ? tokens[index].text : nil
    }

    /// The words and names outside parentheses and string literals, in order, each
    /// parenthesized part standing as one group; only the first 4 KB are read (the clauses
    /// that matter come first).
    private static func topLevelTokens(_ sql: String) -> [Token] {
        let scalars = Array(sql.unicodeScalars.prefix(4096))
        var tokens: [Token] = []
        var depth = 0
        var current: Token?
        var index = 0
        func end() {
            if let token = current, depth == 0 { tokens.append(token) }
            current = nil
        }
        /// Reads up to the closing `quote` (a doubled one stands for itself); returns the text.
        func quoted(_ quote: Unicode.Scalar) -> String {
            var text = ""
            index += 1
            while index < scalars.count {
                if scalars[index] == quote {
                    guard index + 1 < scalars.count, scalars[index + 1] == quote else { break }
                    index += 1
                }
                text.unicodeScalars.append(scalars[index])
                index += 1
            }
            return text
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\"":
                let part = quoted("\"")
                if current == nil { current = Token() }
                current!.text += part
                current!.isQuotedOrQualified = true
            case "'":
                end()
                _ = quoted("'")
            case "." where current != nil:
                current!.text += "."
                current!.isQuotedOrQualified = true
            case "(":
                end()
                if depth == 0 { tokens.append(Token(text: "(", isGroup: true)) }
                depth += 1
            case ")":
                end()
                depth = max(0, depth - 1)
            default:
                let isWordStart = scalar.properties.isAlphabetic || scalar == "_"
                let isWordPart = isWordStart || scalar.properties.numericType != nil || scalar == "$"
                if isWordStart || (current != nil && isWordPart) {
                    if current == nil { current = Token() }
                    current!.text.unicodeScalars.append(scalar)
                } else {
                    end()
                }
            }
            index += 1
        }
        end()
        return tokens
    }
}
