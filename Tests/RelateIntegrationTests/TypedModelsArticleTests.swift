import Foundation
import Testing

@testable import Relate

/// The "Using them" example of Relate's "Typed models" article
/// (`Sources/Relate/Relate.docc/TypedModels.md`), with the types `Generated/` holds for the
/// seed schema, against the server. The article's lines that only show a type are written
/// `_ = …` here; the rest is as printed. Change the two together.
@Suite struct TypedModelsArticleTests {
    @Test func usingThemRuns() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let email = try context.object(Email.self, primaryKey: 3)!       // Grace's
            let grace = try context.object(Person.self, primaryKey: 2)!

            let ada = try context.object(Person.self, primaryKey: 1)!
            _ = try ada.firstname                              // String?  (NOT NULL columns are non-optional)
            _ = try ada.email                                  // RelatedObjects<Email>: insert, remove, removeAll, contains, count
            _ = try email.person                               // Person?
            try email.setPerson(grace)                         // set a to-one: one UPDATE of the foreign key; nil clears it
            try ada.update { $0.surname = "King" }             // one UPDATE … RETURNING of the changed columns
            let e = try context.insert(Email.self) { $0.address = "a@b.c"; $0.person = ada }   // unset columns: defaults
            _ = try context.fetch(Person.self, where: { $0.surname == "Hopper" && $0.email.any { $0.address.hasSuffix("@navy.mil") } },
                                  orderBy: { [$0.surname.ascending] }, limit: 10)
            _ = try context.count(Email.self, where: { $0.person.surname == "Lovelace" })
            let values: Person.Values = try ada.values         // Sendable, Codable, Hashable: what leaves a unit of work
            _ = ada.object                                     // the DatabaseObject beneath

            let firstname: String? = try ada.firstname
            #expect(firstname == "Ada")
            #expect(values.surname == "King")
            #expect(try e.person == ada)
            #expect(try ada.email.contains(e))
            #expect(try email.person == grace)
            #expect(try context.count(Email.self, where: { $0.person.surname == "King" }) == 3)
        }
    }
}
