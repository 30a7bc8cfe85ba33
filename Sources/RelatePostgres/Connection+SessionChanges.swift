import CLibPQ
import Foundation

/// What may outlive a transaction in the session: told from each statement's command tag
/// and text, so that a pool never lends on a connection whose role or settings a unit
/// changed for good (`SET ROLE`, `SET app.tenant = …`, `set_config(…, false)`, `DISCARD`),
/// or that holds what a unit made for the next to read (a cursor, a temporary table, a
/// session's advisory lock, a `LISTEN`). Asking the server instead would cost a statement a
/// unit, and no catalog view lists the custom settings a session made. What a function or
/// a `DO` block changes inside the server is not seen: code that does so undoes it itself.
extension Connection {
    /// Notes a statement that completed with command tag `tag` (`SET`, `SELECT 1`).
    func noteSessionChange(tag: UnsafePointer<CChar>, sql: String) {
        guard !sessionMayHaveChanged else { return }
        if strcmp(tag, "SET") == 0 {
            sessionMayHaveChanged = !Self.setsOnlyTheTransaction(sql)
        } else if strcmp(tag, "RESET") == 0 || strncmp(tag, "DISCARD", 7) == 0 || strcmp(tag, "LISTEN") == 0 {
            // `DISCARD ALL` resets the settings the pool made.
            sessionMayHaveChanged = true
        } else if strcmp(tag, "DECLARE CURSOR") == 0 {
            // A cursor `WITH HOLD` outlives the transaction; one without (a walk's) does not.
            sessionMayHaveChanged = Self.words(sql).contains("hold")
        } else if strncmp(tag, "CREATE ", 7) == 0 || strncmp(tag, "SELECT ", 7) == 0, Self.createsTemporary(sql) {
            sessionMayHaveChanged = true
        } else {
            sessionMayHaveChanged = Self.callsSessionSetConfig(sql)
        }
    }

    /// Whether `sql`, a `CREATE` or a `SELECT` (`CREATE TABLE … AS` and `SELECT … INTO`
    /// report `SELECT n`), makes a temporary relation: `create` first and `temp`,
    /// `temporary` or `pg_temp` among its words, or one of those right after `into`. Most
    /// statements are plain `SELECT`s, told apart by their bytes: no `temp` in any case, no words.
    static func createsTemporary(_ sql: String) -> Bool {
        // (`temp` made once: this runs for every SELECT's result.)
        var matched = 0
        let temp = Self.temp
        let mentionsTemp = sql.utf8.contains { byte in
            matched = byte | 0x20 == temp[matched] ? matched + 1 : (byte | 0x20 == temp[0] ? 1 : 0)
            return matched == temp.count
        }
        guard mentionsTemp else { return false }
        let words = words(sql)
        func isTemporary(_ word: String) -> Bool { word == "temp" || word == "temporary" || word == "pg_temp" }
        if words.first == "create", words.contains(where: isTemporary) { return true }
        return zip(words, words.dropFirst()).contains { $0 == "into" && isTemporary($1) }
    }

    /// Notes a script (its results give only the last statement's tag): any `SET` or `RESET`
    /// in it counts but for `SET LOCAL` and its kin, the `SET` of an `UPDATE` too — a script
    /// in a unit costs its connection at worst, never a leak.
    func noteSessionChange(script sql: String) {
        guard !sessionMayHaveChanged else { return }
        let words = Self.words(sql)
        for (index, word) in words.enumerated() where word == "set" || word == "reset" || Self.keepsSessionState.contains(word) {
            if word == "set", index + 1 < words.count, Self.transactionScoped.contains(words[index + 1]) { continue }
            sessionMayHaveChanged = true
            return
        }
        sessionMayHaveChanged = Self.callsSessionSetConfig(sql)
    }

    /// Words of a script's statement that leave something in the session (a temporary
    /// relation, a cursor, a `DISCARD`, a `LISTEN`).
    private static let keepsSessionState: Set<String> = ["temp", "temporary", "pg_temp", "declare", "discard", "listen"]

    /// The bytes `createsTemporary(_:)` looks for, lowercase.
    private static let temp: [UInt8] = Array("temp".utf8)

    /// What may follow `SET` in a statement whose effect ends with the transaction.
    private static let transactionScoped: Set<String> = ["local", "transaction", "constraints"]

    /// Whether `sql`, a statement whose tag is `SET`, is `SET LOCAL`, `SET TRANSACTION` or
    /// `SET CONSTRAINTS` (comments and spaces before them aside).
    static func setsOnlyTheTransaction(_ sql: String) -> Bool {
        let words = words(sql)
        return words.count >= 2 && words[0] == "set" && transactionScoped.contains(words[1])
    }

    /// The words of `sql`, lowercased, outside comments: identifiers and keywords, each run
    /// of other characters left out (a quoted text's words count, which errs on the safe side).
    static func words(_ sql: String) -> [String] {
        var words: [String] = []
        var word: [UInt8] = []
        let bytes = Array(sql.utf8)
        var index = 0
        func endWord() {
            if !word.isEmpty { words.append(String(decoding: word, as: UTF8.self)) }
            word = []
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                endWord()
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                continue
            }
            if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                endWord()
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 2
                continue
            }
            let lower = byte | 0x20
            if (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
            {
                word.append(byte >= 0x80 ? byte : (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? lower : byte))
            } else {
                endWord()
            }
            index += 1
        }
        endWord()
        return words
    }

    /// Whether `sql` calls `set_config` other than with a literal `true` last (local to the
    /// transaction), as Relate's own opening statements do (a call it cannot read counts),
    /// or takes a session's advisory lock (`pg_advisory_lock`, `pg_try_advisory_lock`, their
    /// `_shared` forms; `pg_advisory_xact_lock` ends with the transaction). Runs for every
    /// statement, so it jumps from underscore to underscore (`memchr`), once for both.
    static func callsSessionSetConfig(_ sql: String) -> Bool {
        var sql = sql
        return sql.withUTF8 { text in
            guard let base = text.baseAddress, text.count >= 10 else { return false }
            func lowered(_ offset: Int) -> UInt8 { text[offset] | 0x20 }
            func spells(_ word: StaticString, at start: Int) -> Bool {
                (0..<word.utf8CodeUnitCount).allSatisfy { lowered(start + $0) == word.utf8Start[$0] }
            }
            var offset = 3
            while offset + 7 <= text.count,
                let found = memchr(base + offset, Int32(UInt8(ascii: "_")), text.count - offset)
            {
                let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                offset = at + 1
                if at >= 8, at + 5 <= text.count, spells("advisory", at: at - 8), spells("lock", at: at + 1) { return true }
                guard at >= 3, at + 7 <= text.count, spells("set", at: at - 3), spells("config", at: at + 1) else { continue }
                // The call's arguments: the last one at depth 1, outside quotes.
                var cursor = at + 7
                while cursor < text.count, [0x20, 0x0A, 0x0D, 0x09].contains(text[cursor]) { cursor += 1 }
                guard cursor < text.count, text[cursor] == UInt8(ascii: "(") else { continue }
                var (depth, quoted, lastArgument) = (0, false, cursor + 1)
                var end: Int?
                while cursor < text.count {
                    let byte = text[cursor]
                    if byte == UInt8(ascii: "'") {
                        quoted.toggle()
                    } else if !quoted, byte == UInt8(ascii: "(") {
                        depth += 1
                    } else if !quoted, byte == UInt8(ascii: ")") {
                        depth -= 1
                        if depth == 0 {
                            end = cursor
                            break
                        }
                    } else if !quoted, byte == UInt8(ascii: ","), depth == 1 {
                        lastArgument = cursor + 1
                    }
                    cursor += 1
                }
                guard let end else { return true }
                let argument = String(decoding: UnsafeBufferPointer(rebasing: text[lastArgument..<end]), as: UTF8.self)
                if argument.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() != "true" { return true }
                offset = end
            }
            return false
        }
    }
}
