import CLibPQ
import Foundation

/// What the library needs to know of a connection string, found by libpq's own parser:
/// which secrets it holds, so no message repeats them.
enum ConnectionString {
    /// The password in the string, and `PGPASSWORD`, when set.
    static func secrets(in conninfo: String) -> [String] {
        var secrets: [String] = []
        if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], !password.isEmpty {
            secrets.append(password)
        }
        guard let options = PQconninfoParse(conninfo, nil) else { return secrets }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val {
                let password = String(cString: value)
                if !password.isEmpty { secrets.append(password) }
                // A URL carries the password percent-encoded.
                if let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
                    encoded != password
                {
                    secrets.append(encoded)
                }
            }
            option += 1
        }
        return secrets
    }

    /// libpq's complaint about a malformed string, or `nil` when it parses. libpq quotes
    /// fragments of the string in its message, which can be a password: only its words
    /// before the first quote are kept, and the position it names.
    static func syntaxProblem(in conninfo: String) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &message) else {
            defer { if let message { PQfreemem(message) } }
            let text = message.map { String(cString: $0) } ?? "invalid connection string"
            // libpq quotes the text it stumbled on, and may quote the whole URL after it,
            // password and all; its quotes need not pair (an unexpected `"` is quoted too).
            // So its words up to the first quote, and where it stumbled, are all that is kept.
            let words = text.prefix { $0 != "\"" }.trimmingCharacters(in: .whitespacesAndNewlines)
            let position = text.range(of: #"at position [0-9]+"#, options: .regularExpression).map { " (\(text[$0]))" } ?? ""
            return "invalid connection string: \(words.isEmpty ? "cannot be read" : words)\(position)"
        }
        PQconninfoFree(options)
        return nil
    }

    static func redact(_ message: String, secrets: [String]) -> String {
        secrets.reduce(message) { $0.replacingOccurrences(of: $1, with: "********") }
    }
}
