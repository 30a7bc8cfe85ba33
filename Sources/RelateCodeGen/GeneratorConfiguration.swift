import Foundation

/// What the generator is told beyond the model: `relate-generate.json` beside
/// `relate-model.json` (the `RelateGenerator` plugin), `relate generate --configuration FILE`
/// and its `--type table.column=Type` options.
///
/// ```json
/// { "types": { "account.settings": "Settings", "audit.log.payload": "AuditPayload" },
///   "jsonCoder": "AppJSON" }
/// ```
///
/// `types` gives a `json` or `jsonb` column a Swift type of the user's that conforms to
/// `Codable`, `Hashable` and `Sendable` (the generated `Values` are all three), by the
/// entity's model name and the column's name. `jsonCoder` names a type conforming to
/// Relate's `TypedJSONCoder` that encodes and decodes them (`DefaultJSONCoder` when absent).
public struct GeneratorConfiguration: Codable, Sendable, Hashable {
    /// The file's name beside `relate-model.json`.
    public static let fileName = "relate-generate.json"

    /// Swift types of JSON columns, by `entity.column` (the entity's model name, so
    /// `schema.table.column` outside the first schema).
    public var types: [String: String]?
    /// The type conforming to `TypedJSONCoder` those columns are encoded and decoded with.
    public var jsonCoder: String?

    /// - Parameters:
    ///   - types: Swift types of JSON columns, by `entity.column`.
    ///   - jsonCoder: The coder's type name; `nil` for `DefaultJSONCoder`.
    public init(types: [String: String]? = nil, jsonCoder: String? = nil) {
        self.types = types
        self.jsonCoder = jsonCoder
    }

    /// Decodes `relate-generate.json`.
    ///
    /// - Parameter json: The file's bytes.
    /// - Throws: `DecodingError` when it is not of this shape.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(Self.self, from: json)
    }

    /// Adds one `--type` option's `table.column=Type` (the column's name after the last dot).
    ///
    /// - Parameter option: The option's value.
    /// - Throws: ``Generator/GeneratorError`` when it has no `=`, no dot before it, or no type after it.
    public mutating func addType(_ option: String) throws {
        guard let equals = option.firstIndex(of: "="), option[..<equals].contains("."),
            !option[option.index(after: equals)...].trimmingCharacters(in: .whitespaces).isEmpty
        else {
            throw Generator.GeneratorError(description: "--type \(option): expected table.column=TypeName")
        }
        types = (types ?? [:]).merging([String(option[..<equals]): String(option[option.index(after: equals)...])]) { $1 }
    }
}
