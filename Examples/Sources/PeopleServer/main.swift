import Foundation
import Hummingbird
import Relate

/// A person as the API shows it: `decode` makes it from an object whose emails and titles
/// were prefetched, inside the unit of work; only this value leaves it.
struct Person: Decodable, ResponseEncodable {
    struct Email: Decodable, Encodable, Sendable { var address: String? }
    struct Title: Decodable, Encodable, Sendable { var id: Int; var name: String? }
    var id: Int
    var firstname: String?
    var surname: String?
    var email: [Email]
    var title: [Title]
}

/// `POST /people/:id/titles` takes `{"title": 3}`: the title's id.
struct TitleRequest: Decodable {
    var title: Int
}

/// Reads one person with its emails and titles: three queries (the person, then one per
/// relationship for the prefetch), on a pooled connection, off the cooperative pool.
func person(_ id: Int, in context: DatabaseContext) throws -> Person? {
    guard let person = try context.object("person", primaryKey: id) else { return nil }
    try context.prefetch(["email", "title"], for: [person])
    return try person.decode(Person.self)
}

let url = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
let database = try Database(url: url, maxConnections: 4)

let router = Router()
router.get("people/:id") { _, context -> Person in
    let id = try context.parameters.require("id", as: Int.self)
    guard let found = try await database.read({ try person(id, in: $0) }) else {
        throw HTTPError(.notFound, message: "no person \(id)")
    }
    return found
}
router.post("people/:id/titles") { request, context -> EditedResponse<Person> in
    let id = try context.parameters.require("id", as: Int.self)
    let wanted = try await request.decode(as: TitleRequest.self, context: context)
    let updated = try await database.write { context -> Person? in
        guard let owner = try context.object("person", primaryKey: id),
            let title = try context.object("title", primaryKey: wanted.title)
        else { return nil }
        // One INSERT into person_title_rel (nothing when the pair is there already).
        try owner.objects(forKey: "title").insert(title)
        return try person(id, in: context)
    }
    guard let updated else { throw HTTPError(.notFound, message: "no person \(id) or no title \(wanted.title)") }
    return EditedResponse(status: .created, response: updated)
}

let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
