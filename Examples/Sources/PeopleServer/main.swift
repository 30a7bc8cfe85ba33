import Configuration
import Foundation
import Hummingbird
import InMemoryTracing
import Logging
import OTel
import Relate
import RelateConfiguration
import ServiceLifecycle
import Tracing

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
    return try response(for: person)
}

/// The person as the API shows her, from her loaded emails and titles.
func response(for person: Person) throws -> PersonResponse {
    let values = try person.values
    return PersonResponse(
        id: values.id, firstname: values.firstname, surname: values.surname,
        email: try person.email.map { try $0.values }, title: try person.title.map { try $0.values })
}

// Settings from environment variables through swift-configuration: `PORT`, `HOST`, and the
// database's under `DATABASE_`: `DATABASE_URL` (a secret), `DATABASE_MAX_CONNECTIONS`,
// `DATABASE_SHUTDOWN_GRACE_PERIOD`, … (the keys of `Relate.Configuration(config:)`).
let config = ConfigReader(provider: EnvironmentVariablesProvider())
let port = config.int(forKey: "port", default: 8080)
let host = config.string(forKey: "host", default: "127.0.0.1")
let logger = Logger(label: "PeopleServer")

// Tracing, bootstrapped before the database is made (it takes the global tracer then):
// through swift-otel's OTLP/HTTP exporter when a collector is configured the usual way
// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
// `OTEL_TRACES_EXPORTER=otlp`; the other `OTEL_*` variables apply), else to the console.
let environment = ProcessInfo.processInfo.environment
let observability: any Service
if environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil || environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil
    || environment["OTEL_TRACES_EXPORTER"] == "otlp"
{
    var otel = OTel.Configuration.default
    otel.serviceName = "PeopleServer"
    otel.traces.otlpExporter.protocol = .httpProtobuf
    // Logs stay on the console (swift-log's default handler) and no metrics are exported.
    otel.logs.enabled = false
    otel.metrics.enabled = false
    observability = try OTel.bootstrap(configuration: otel)
    logger.info("tracing: OTLP/HTTP to \(environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? environment["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "the default collector")")
} else {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    observability = ConsoleSpans(tracer: tracer, logger: Logger(label: "PeopleServer.spans"))
    logger.info("tracing: to the console (set OTEL_EXPORTER_OTLP_ENDPOINT for a collector)")
}

let database = try Database(config: config.scoped(to: "database"), logger: Logger(label: "relate"))
// Schema drift is an error at start-up, naming the table and column, not a wrong value later.
try await database.read { try RelateModel.check($0) }

/// Everyone with their emails and titles, in id order: what the page shows (three queries).
func everyone(in context: DatabaseContext) throws -> [PersonResponse] {
    let people = try context.fetch(Person.self, orderBy: { [$0.id.ascending] })
    try context.prefetch(["email", "title"], for: people.map(\.object))
    return try people.map(response(for:))
}

/// The page: a list of people with their titles, kept current by server-sent events.
let page = """
    <!doctype html>
    <html><head><meta charset="utf-8"><title>People</title>
    <style>body{font:16px system-ui,sans-serif;margin:2em}li{margin:.3em 0}.titles{color:#666}</style></head>
    <body><h1>People</h1><ul id="people"><li>…</li></ul>
    <script>
    const list = document.getElementById('people');
    new EventSource('/events').onmessage = (event) => {
      list.replaceChildren(...JSON.parse(event.data).map((p) => {
        const item = document.createElement('li');
        item.textContent = `${p.firstname ?? ''} ${p.surname ?? ''}`;
        const titles = document.createElement('span');
        titles.className = 'titles';
        titles.textContent = p.title.length ? ' — ' + p.title.map((t) => t.name).join(', ') : '';
        item.append(titles);
        return item;
      }));
    };
    </script></body></html>
    """

let counts = RequestCounts()
let router = Router()
router.middlewares.add(RequestCountMiddleware(counts: counts))
// A span per request (the HTTP server span): Relate's unit and statement spans are its children.
router.middlewares.add(TracingMiddleware())
router.get("/") { _, _ -> Response in
    Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
}
// Server-sent events: the list now, then again whenever a commit (of any client) changes
// people, their titles or the titles' names, from `database.observe`'s one shared feed.
router.get("events") { _, _ -> Response in
    let streams = [
        try await database.observe(FetchRequest("person", orderBy: [.ascending("id")])),
        try await database.observe(FetchRequest("person_title_rel")),
        try await database.observe(FetchRequest("title")),
    ]
    return Response(
        status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
        body: ResponseBody { writer in
            let (changed, change) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            // The stream never ends by itself: a graceful shutdown (SIGTERM) ends it, or the
            // server would wait for it for ever.
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for stream in streams {
                        group.addTask { for try await _ in stream { change.yield() } }
                    }
                    for await _ in changed {
                        let people = try await database.read { try everyone(in: $0) }
                        let json = String(decoding: try JSONEncoder().encode(people), as: UTF8.self)
                        try await writer.write(ByteBuffer(string: "data: \(json)\n\n"))
                    }
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                change.finish()
            }
            try await writer.finish(nil)
        })
}
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

let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)), logger: logger)
// One service group: on SIGTERM or SIGINT it shuts down in reverse order: the HTTP server
// first (no new request; those begun are answered), then the database (units still running
// finish and commit, the pool closes), then the spans are flushed.
let group = ServiceGroup(
    configuration: .init(
        services: [observability, database, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
try await group.run()
logger.info("stopped: requests \(counts.summary)")
