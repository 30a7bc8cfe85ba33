import Hummingbird

// What both servers answer, in one place, so that they JSON-encode exactly the same shapes
// (../http-run checks that their answers are the same JSON before it measures).

/// A post as the API shows it, inside its author.
public struct PostJSON: Codable, Sendable {
    public var id: Int
    public var title: String
    public var views: Int

    /// A post, one argument per field.
    public init(id: Int, title: String, views: Int) {
        self.id = id
        self.title = title
        self.views = views
    }
}

/// An author as the API shows it: with her posts (in id order) for `GET /authors/:id`,
/// without them (`posts` absent) in a list and after an update.
public struct AuthorJSON: ResponseEncodable, Codable, Sendable {
    public var id: Int
    public var name: String
    public var email: String
    public var score: Int
    public var active: Bool
    public var posts: [PostJSON]?

    /// An author, one argument per field.
    public init(id: Int, name: String, email: String, score: Int, active: Bool, posts: [PostJSON]? = nil) {
        self.id = id
        self.name = name
        self.email = email
        self.score = score
        self.active = active
        self.posts = posts
    }
}

/// `GET /authors?minScore=N`: the first 50 authors (in id order) whose score is at least N.
public struct AuthorList: ResponseEncodable, Sendable {
    public var authors: [AuthorJSON]

    /// The list.
    public init(authors: [AuthorJSON]) {
        self.authors = authors
    }
}

/// `PATCH /authors/:id` takes `{"score": 7}`.
public struct ScoreRequest: Decodable, Sendable {
    public var score: Int
}

/// How many authors the list endpoint answers with at most.
public let listLimit = 50

/// The settings both servers read from the environment: `PORT`, `DATABASE_URL` and
/// `POOL_SIZE` (connections, default 4, kept open from the start on both sides).
public struct ServerSettings: Sendable {
    public var port: Int
    public var databaseURL: String
    public var poolSize: Int

    /// Reads the environment.
    public init(environment: [String: String]) {
        port = Int(environment["PORT"] ?? "") ?? 8080
        databaseURL = environment["DATABASE_URL"] ?? ""
        poolSize = Int(environment["POOL_SIZE"] ?? "") ?? 4
    }
}
