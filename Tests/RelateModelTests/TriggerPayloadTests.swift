import Foundation
import Testing

@testable import Relate

/// How a trigger's payload is read (`TriggerPayload.init(json:)`): the same fields as
/// Foundation's `JSONSerialization` reads for every payload Relate's triggers write, keys in
/// the server's text forms, and anything hostile read as no payload without a crash. No server
/// (the feed's tests read what the triggers really send: ChangeTrackingTests,
/// TrackingTrustTests).
@Suite struct TriggerPayloadTests {
    /// The fields as `JSONSerialization` gives them, the way the feed read payloads before
    /// (numbers in keys by `NSNumber`'s text).
    static func oracle(_ json: String) -> TriggerPayload? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        func texts(_ value: Any?) -> [[String?]]? {
            guard let keys = value as? [[Any]] else { return nil }
            var texts: [[String?]] = []
            for key in keys {
                var parts: [String?] = []
                for part in key {
                    switch part {
                    case let text as String: parts.append(text)
                    case let number as NSNumber: parts.append(number.stringValue)
                    default: return nil
                    }
                }
                texts.append(parts)
            }
            return texts
        }
        var payload = TriggerPayload()
        payload.transaction = object["x"] as? Int
        payload.relation = object["r"] as? Int
        payload.schema = object["s"] as? String
        payload.table = object["t"] as? String
        payload.kind = object["k"] as? String
        payload.keys = texts(object["keys"])
        payload.oldKeys = texts(object["old"])
        payload.changedColumns = object["c"] as? [String]
        payload.comparedColumns = object["n"] as? Int
        payload.stored = object["id"] as? Int
        payload.isDefinitionChange = object["ddl"] != nil
        return payload
    }

    static func same(_ a: TriggerPayload?, _ b: TriggerPayload?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.transaction == b.transaction && a.relation == b.relation && a.schema == b.schema && a.table == b.table && a.kind == b.kind
            && a.keys == b.keys && a.oldKeys == b.oldKeys && a.changedColumns == b.changedColumns && a.comparedColumns == b.comparedColumns
            && a.stored == b.stored && a.isDefinitionChange == b.isDefinitionChange
    }

    /// Text that needs escapes in JSON, and text that does not, in several scripts.
    static let texts = [
        "public", "document", "Ünïcödé", "日本語", "emoji 🙂 here", "quote \" and \\ backslash", "tab\tnew\nline\r", "\u{1}\u{1F}",
        "slash / and \u{7F}", "", "a.b", "x\"y", "🙂",
    ]

    /// A JSON string of `text`, with its escapes written in one of the ways the grammar allows.
    static func quoted(_ text: String, _ random: inout some RandomNumberGenerator) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += Bool.random(using: &random) ? "\\n" : "\\u000a"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "/": out += Bool.random(using: &random) ? "/" : "\\/"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04X", scalar.value)
            case _ where scalar.value > 0xFFFF && Bool.random(using: &random):
                // A surrogate pair, as some writers escape what lies past the first plane.
                let value = scalar.value - 0x10000
                out += String(format: "\\u%04x\\u%04x", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A payload as the triggers write one (every field, some missing, fields it never
    /// sends, any spacing), from a seeded generator.
    static func payload(_ random: inout some RandomNumberGenerator) -> String {
        func space() -> String { ["", " ", "\n  ", "\t"].randomElement(using: &random)! }
        func text() -> String { quoted(texts.randomElement(using: &random)!, &random) }
        func keys() -> String {
            let width = Int.random(in: 1...3, using: &random)
            let rows = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                "[" + (0..<width).map { _ in Bool.random(using: &random) ? String(Int.random(in: -1_000_000...1_000_000, using: &random)) : text() }
                    .joined(separator: "," + space()) + "]"
            }
            return "[" + rows.joined(separator: ",") + "]"
        }
        var fields = [
            "\"x\":\(Int.random(in: 0...Int(Int32.max), using: &random))", "\"r\":\(Int.random(in: 16384...99999, using: &random))",
            "\"s\":\(text())", "\"t\":\(text())", "\"k\":\(["\"I\"", "\"U\"", "\"D\"", "1", "null"].randomElement(using: &random)!)",
            "\"keys\":\(Bool.random(using: &random) ? keys() : "null")", "\"old\":\(Bool.random(using: &random) ? keys() : "null")",
            "\"c\":\(["null", "[]", "[\"title\"]", "[\"title\",\(text())]", "[1]"].randomElement(using: &random)!)",
            "\"n\":\(["null", "4", "12", "\"4\""].randomElement(using: &random)!)", "\"id\":\(Int.random(in: 1...1_000_000, using: &random))",
            "\"ddl\":1", "\"other\":{\"a\":[1,{\"b\":null}],\"c\":true}", "\"more\":[false, -0.5e-3, \(text())]",
        ]
        fields.shuffle(using: &random)
        let kept = fields.prefix(Int.random(in: 0...fields.count, using: &random))
        return space() + "{" + kept.map { space() + $0.replacingOccurrences(of: ":", with: space() + ":" + space(), options: .anchored) + space() }
            .joined(separator: ",") + "}" + space()
    }

    @Test func readsWhatJSONSerializationReadsOfEveryPayloadShape() {
        var random = SplitMix64(state: 37)
        for _ in 0..<3_000 {
            let json = Self.payload(&random)
            let read = TriggerPayload(json: json)
            #expect(read != nil, "\(json)")
            #expect(Self.same(read, Self.oracle(json)), "\(json)")
        }
    }

    @Test func keysAreTheServersTextForms() throws {
        // A numeric key keeps its scale, a bigint past 2^53 its digits, a boolean the server's t/f.
        let payload = try #require(TriggerPayload(json: #"{"keys":[[1.50, 9007199254740993, true, false, "a"]], "old":[[-0, 1e3]]}"#))
        #expect(payload.keys == [["1.50", "9007199254740993", "t", "f", "a"]])
        #expect(payload.oldKeys == [["-0", "1e3"]])
        // A null, an object or a bare value where a key must be: the table is read again (no keys).
        for keys in ["[[null]]", #"[[{"a":1}]]"#, "[1]", #"["a"]"#, "{}", "1", "[[[1]]]"] {
            #expect(try #require(TriggerPayload(json: #"{"keys":\#(keys),"s":"public"}"#)).keys == nil, "\(keys)")
        }
        // A field of another type is missing; the others stand.
        let mixed = try #require(TriggerPayload(json: #"{"x":"1","r":1.5,"s":2,"t":"doc","n":true,"id":99999999999999999999,"c":["a",1]}"#))
        #expect(mixed.transaction == nil && mixed.relation == nil && mixed.schema == nil && mixed.table == "doc")
        #expect(mixed.comparedColumns == nil && mixed.stored == nil && mixed.changedColumns == nil && !mixed.isDefinitionChange)
        // The last of a repeated field wins.
        #expect(TriggerPayload(json: #"{"t":"a","t":"b"}"#)?.table == "b")
    }

    @Test func whatIsNotOneJSONObjectIsNoPayload() {
        let bad = [
            "", " ", "null", "[]", "1", "\"x\"", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\":1}x", "{\"a\":1}{}",
            "{'a':1}", "{a:1}", "{\"a\":01}", "{\"a\":-}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":+1}", "{\"a\":tru}",
            "{\"a\":nul}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800\\u0041\"}",
            "{\"a\":\"line\nbreak\"}", "{\"a\":\"tab\there\"}", "{\"a\":\"open}", "{\"a\":[1,2}", "{\"a\":{\"b\":1]}", "{\"a\":[1 2]}",
            "{\"a\" 1}", "{\"a\":NaN}", "{\"a\":Infinity}",
        ]
        for json in bad {
            #expect(TriggerPayload(json: json) == nil, "\(json)")
        }
        // An escape cut short at the end of the bytes.
        for json in [#"{"t":"\u00"#, #"{"t":"\ud83d\ude"#, #"{"t":"\"#, #"{"t":"\ud83d"#] {
            #expect(TriggerPayload(json: json) == nil, "\(json)")
        }
        // Every escape there is.
        #expect(TriggerPayload(json: #"{"t":"\b\f\n\r\t\"\\\/\u00e9\uD83D\uDE42"}"#)?.table == "\u{8}\u{C}\n\r\t\"\\/é🙂")
        // Every cut of a payload is none either, and reading it never goes past its end.
        let whole = #"{"x":7,"r":16400,"s":"public","t":"document","k":"U","keys":[[1,"é\n"]],"old":[[2]],"c":["title"],"n":4}"#
        #expect(TriggerPayload(json: whole)?.keys == [["1", "é\n"]])
        for end in whole.indices.dropLast() {
            #expect(TriggerPayload(json: String(whole[..<end])) == nil)
        }
    }

    @Test func hostileNestingAndSizeCostNothingButTheRead() {
        // Nesting a stack would overflow on: refused at a depth no payload of Relate's has.
        #expect(TriggerPayload(json: "{\"a\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}") == nil)
        #expect(TriggerPayload(json: "{\"a\":" + String(repeating: "{\"b\":", count: 50_000) + "1" + String(repeating: "}", count: 50_001)) == nil)
        // Sixteen levels under the payload's object are read, seventeen are not.
        func nested(_ depth: Int) -> String {
            "{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + ",\"t\":\"x\"}"
        }
        #expect(TriggerPayload(json: nested(16))?.table == "x")
        #expect(TriggerPayload(json: nested(17)) == nil)
        // A long string, escaped all the way, is read whole.
        let long = String(repeating: "\\u00e9", count: 200_000)
        #expect(TriggerPayload(json: "{\"t\":\"\(long)\"}")?.table == String(repeating: "é", count: 200_000))
    }

    @Test func bytesChangedAtRandomNeverTrapAndReadAlikeWhenBothRead() {
        var random = SplitMix64(state: 1_234)
        var bothRead = 0
        for _ in 0..<3_000 {
            var bytes = Array(Self.payload(&random).utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = Array("{}[]\",:\\0123456789.eE-+tfnu \n".utf8).randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(Array("{}[]\",:\\1".utf8).randomElement(using: &random)!, at: at)
                }
            }
            let json = String(decoding: bytes, as: UTF8.self)
            let read = TriggerPayload(json: json)
            let oracle = Self.oracle(json)
            // Stricter than Foundation, never laxer: what it reads, JSONSerialization reads,
            // but for numbers past a Double's range, which JSON allows and Foundation refuses.
            #expect(read == nil || oracle != nil || json.contains(/[eE][+-]?[0-9]{3}/), "\(json)")
            guard let read, let oracle else { continue }
            bothRead += 1
            #expect(read.schema == oracle.schema && read.table == oracle.table && read.kind == oracle.kind, "\(json)")
            #expect(read.changedColumns == oracle.changedColumns && read.isDefinitionChange == oracle.isDefinitionChange, "\(json)")
            // A number it reads as an integer is the one Foundation reads (which also takes
            // 1.0 and 1e3 for integers, where the triggers write digits only).
            for (mine, theirs) in [(read.transaction, oracle.transaction), (read.relation, oracle.relation), (read.stored, oracle.stored)] {
                #expect(mine == nil || mine == theirs, "\(json)")
            }
            // The same keys, numbers compared by value (Foundation writes 1.50 as 1.5, 1e3 as 1000).
            func byValue(_ keys: [[String?]]?) -> [[String?]]? { keys?.map { $0.map { $0.map { Double($0).map { "\($0)" } ?? $0 } } } }
            #expect(byValue(read.keys) == byValue(oracle.keys) && byValue(read.oldKeys) == byValue(oracle.oldKeys), "\(json)")
        }
        #expect(bothRead > 100)
    }
}
