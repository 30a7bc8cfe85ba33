import Foundation
import Hummingbird
import Relate

// `Person`, `Email`, `Title` and `PersonTitleRel` are generated at build time from
// relate-model.json (`relate inspect --format json` of BaseTen's person / email / title
// schema) by the RelateGenerator plugin: no database is needed to build.

/// A person as the API shows it, made from the generated types' values inside the unit of
/// work; only this value leaves it.
struct PersonResponse: ResponseEncodable {
    var id: Int
    var firstname: String?
    var surname: String?
    var email: [Email.Values]
    var title: [Title.Values]
}

/// `POST /people/:id/titles` takes `{"title": 3}`: the title's id.
struct TitleRequest: Decodable {
    var title: Int
}

/// Reads one person with her emails and titles: three queries (the person, then one per
/// relationship for the prefetch), on a pooled connection, off the cooperative pool.
func person(_ id: Int, in context: DatabaseContext) throws -> PersonResponse? {
    guard let person = try context.object(Person.self, primaryKey: id) else { return nil }
    try context.prefetch(["email", "title"], for: [person.object])
    let values = try person.values
    return PersonResponse(
        id: values.id, firstname: values.firstname, surname: values.surname,
        email: try person.email.map { try $0.values }, title: try person.title.map { try $0.values })
}

let url = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
let database = try Database(url: url, maxConnections: 4)
// Schema drift is an error at start-up, naming the table and column, not a wrong value later.
try await database.read { try RelateModel.check($0) }

let router = Router()
router.get("people/:id") { _, context -> PersonResponse in
    let id = try context.parameters.require("id", as: Int.self)
    guard let found = try await database.read({ try person(id, in: $0) }) else {
        throw HTTPError(.notFound, message: "no person \(id)")
    }
    return found
}
router.post("people/:id/titles") { request, context -> EditedResponse<PersonResponse> in
    let id = try context.parameters.require("id", as: Int.self)
    let wanted = try await request.decode(as: TitleRequest.self, context: context)
    let updated = try await database.write { context -> PersonResponse? in
        guard let owner = try context.object(Person.self, primaryKey: id),
            let title = try context.object(Title.self, primaryKey: wanted.title)
        else { return nil }
        // One INSERT into person_title_rel (nothing when the pair is there already).
        try owner.title.insert(title)
        return try person(id, in: context)
    }
    guard let updated else { throw HTTPError(.notFound, message: "no person \(id) or no title \(wanted.title)") }
    return EditedResponse(status: .created, response: updated)
}

let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
