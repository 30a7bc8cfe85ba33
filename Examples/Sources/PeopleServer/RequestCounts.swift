import Hummingbird
import Synchronization

/// How many requests the server began and how many it answered in full (the body written to
/// the end), by status class: logged at exit, so that a graceful shutdown under load shows
/// that every request it began got its answer.
final class RequestCounts: Sendable {
    private struct Counts {
        var started = 0
        var answered = 0
        var byClass: [Int: Int] = [:]
    }
    private let counts = Mutex(Counts())

    /// A request began.
    func start() {
        counts.withLock { $0.started += 1 }
    }

    /// A request's answer was written to the end, with this status.
    func answer(_ status: HTTPResponse.Status) {
        counts.withLock {
            $0.answered += 1
            $0.byClass[status.code / 100, default: 0] += 1
        }
    }

    /// "started 1234, answered 1234 (2xx 1230, 4xx 4)".
    var summary: String {
        counts.withLock { counts in
            let classes = counts.byClass.keys.sorted().map { "\($0)xx \(counts.byClass[$0]!)" }.joined(separator: ", ")
            return "started \(counts.started), answered \(counts.answered)" + (classes.isEmpty ? "" : " (\(classes))")
        }
    }

    /// Whether every request begun was answered.
    var allAnswered: Bool {
        counts.withLock { $0.started == $0.answered }
    }
}

/// Counts each request as it begins and again once its answer's body has been written to
/// the end (a thrown error counts as answered with its status: the router writes it).
struct RequestCountMiddleware<Context: RequestContext>: RouterMiddleware {
    let counts: RequestCounts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        counts.start()
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            counts.answer((error as? any HTTPResponseError)?.status ?? .internalServerError)
            throw error
        }
        let (body, status, counts) = (response.body, response.status, counts)
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            try await body.write(writer)
            counts.answer(status)
        }
        return response
    }
}
