import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerShapes
import ServiceLifecycle

// The three endpoints over postgres-nio's PostgresClient, as its users write them: the SQL
// by hand, rows decoded as typed tuples, the same JSON shapes as RelateServer.

let settings = ServerSettings(environment: ProcessInfo.processInfo.environment)
guard let url = URLComponents(string: settings.databaseURL), let host = url.host, let user = url.user else {
    fatalError("DATABASE_URL must be a postgresql://user[:password]@host[:port]/database URL")
}
var configuration = PostgresClient.Configuration(
    host: host, port: url.port ?? 5432, username: user, password: url.password,
    database: url.path.isEmpty ? nil : String(url.path.dropFirst()), tls: .disable)
configuration.options.maximumConnections = settings.poolSize
configuration.options.minimumConnections = settings.poolSize
let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "PostgresNIOServer.pool"))
let logger = Logger(label: "PostgresNIOServer")

let router = Router()
// A row by key with its to-many: the author, then her posts.
router.get("authors/:id") { _, context -> AuthorJSON in
    let id = try context.parameters.require("id", as: Int.self)
    let rows = try await client.query("SELECT id, name, email, score, active FROM author WHERE id = \(id)", logger: logger)
    var found: AuthorJSON?
    for try await (id, name, email, score, active) in rows.decode((Int, String, String, Int, Bool).self) {
        found = AuthorJSON(id: id, name: name, email: email, score: score, active: active)
    }
    guard var author = found else { throw HTTPError(.notFound, message: "no author \(id)") }
    var posts: [PostJSON] = []
    let postRows = try await client.query("SELECT id, title, views FROM post WHERE author_id = \(id) ORDER BY id", logger: logger)
    for try await (id, title, views) in postRows.decode((Int, String, Int).self) {
        posts.append(PostJSON(id: id, title: title, views: views))
    }
    author.posts = posts
    return author
}
// A filtered list of 50.
router.get("authors") { request, context -> AuthorList in
    let minScore = try request.uri.queryParameters.require("minScore", as: Int.self)
    let rows = try await client.query(
        "SELECT id, name, email, score, active FROM author WHERE score >= \(minScore) ORDER BY id LIMIT \(listLimit)",
        logger: logger)
    var authors: [AuthorJSON] = []
    for try await (id, name, email, score, active) in rows.decode((Int, String, String, Int, Bool).self) {
        authors.append(AuthorJSON(id: id, name: name, email: email, score: score, active: active))
    }
    return AuthorList(authors: authors)
}
// An update by key: one UPDATE … RETURNING.
router.patch("authors/:id") { request, context -> AuthorJSON in
    let id = try context.parameters.require("id", as: Int.self)
    let score = try await request.decode(as: ScoreRequest.self, context: context).score
    let rows = try await client.query(
        "UPDATE author SET score = \(score) WHERE id = \(id) RETURNING id, name, email, score, active", logger: logger)
    var updated: AuthorJSON?
    for try await (id, name, email, score, active) in rows.decode((Int, String, String, Int, Bool).self) {
        updated = AuthorJSON(id: id, name: name, email: email, score: score, active: active)
    }
    guard let updated else { throw HTTPError(.notFound, message: "no author \(id)") }
    return updated
}

// The client is a service of the app: the server drains first on SIGTERM, then the pool.
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: settings.port)),
    services: [client], logger: Logger(label: "PostgresNIOServer"))
try await app.runService()
