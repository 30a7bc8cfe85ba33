import Foundation
import Relate

// `Person`, `Email`, `Title` and `PersonTitleRel` are generated at build time from
// relate-model.json (`relate inspect --format json` of BaseTen's person / email / title
// schema) by the RelateGenerator plugin.

guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"] else {
    print("typed models for \(RelateModel.entities.map(\.name).joined(separator: ", ")) (fingerprint \(RelateModel.fingerprint))")
    print("set DATABASE_URL to a database with the schema to read it")
    exit(0)
}

let context = try DatabaseContext(url: url)
try RelateModel.check(context)                       // schema drift: an error naming table and column
for person in try context.fetch(Person.self, orderBy: { [$0.surname.ascending] }) {
    let emails = try person.email.map { try $0.address ?? "?" }
    let titles = try person.title.map { try $0.name ?? "?" }
    print("\(try person.firstname ?? "") \(try person.surname ?? ""): \(emails.joined(separator: ", ")); \(titles.joined(separator: ", "))")
}
let sailors = try context.count(Person.self, where: { $0.email.any { $0.address.hasSuffix("@navy.mil") } })
print("\(sailors) with an address at navy.mil")
