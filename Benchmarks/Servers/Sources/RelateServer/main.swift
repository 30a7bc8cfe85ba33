import Foundation
import Hummingbird
import Logging
import Relate
import ServerShapes
import ServiceLifecycle

// The three endpoints over Relate: typed models (`Author`, `Post`) generated at build time
// from relate-model.json by the RelateGenerator plugin; each request is one unit of work on
// the pool (libpq on threads of its own, off the cooperative pool).

let settings = ServerSettings(environment: ProcessInfo.processInfo.environment)
var configuration = Configuration()
configuration.maxConnections = settings.poolSize
configuration.minIdleConnections = settings.poolSize
let database = try Database(url: settings.databaseURL, configuration: configuration)
try await database.read { try RelateModel.check($0) }

/// The author as the API shows her; her posts, in id order, when `posts` is given.
func json(_ author: Author, posts: [Post]? = nil) throws -> AuthorJSON {
    let values = try author.values
    return AuthorJSON(
        id: values.id, name: values.name, email: values.email, score: values.score, active: values.active,
        posts: try posts?.map { post in
            let values = try post.values
            return PostJSON(id: values.id, title: values.title, views: values.views)
        }.sorted { $0.id < $1.id })
}

let router = Router()
// A row by key with its to-many: the author, then her posts (the relationship, faulted in
// by one query).
router.get("authors/:id") { _, context -> AuthorJSON in
    let id = try context.parameters.require("id", as: Int.self)
    let found = try await database.read { context -> AuthorJSON? in
        guard let author = try context.object(Author.self, primaryKey: id) else { return nil }
        return try json(author, posts: Array(try author.post))
    }
    guard let found else { throw HTTPError(.notFound, message: "no author \(id)") }
    return found
}
// A filtered list of 50.
router.get("authors") { request, context -> AuthorList in
    let minScore = try request.uri.queryParameters.require("minScore", as: Int.self)
    let authors = try await database.read { context in
        try context.fetch(Author.self, where: { $0.score >= minScore }, orderBy: { [$0.id.ascending] }, limit: listLimit)
            .map { try json($0) }
    }
    return AuthorList(authors: authors)
}
// An update by key: one UPDATE … RETURNING, without reading the row first, committed by
// itself (one round trip, as postgres-nio's side sends it; a `write` unit would add COMMIT).
router.patch("authors/:id") { request, context -> AuthorJSON in
    let id = try context.parameters.require("id", as: Int.self)
    let score = try await request.decode(as: ScoreRequest.self, context: context).score
    let updated = try await database.writeWithoutTransaction { context -> AuthorJSON? in
        try context.update(Author.self, primaryKey: id) { $0.score = score }.map { try json($0) }
    }
    guard let updated else { throw HTTPError(.notFound, message: "no author \(id)") }
    return updated
}

// The database is a service of the app: the server drains first on SIGTERM, then the pool.
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: settings.port)),
    services: [database], logger: Logger(label: "RelateServer"))
try await app.runService()
