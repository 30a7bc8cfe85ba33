import ArgumentParser
import Foundation
import Relate

@main
struct RelateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relate",
        abstract: "Point Relate at an existing PostgreSQL schema.",
        subcommands: [Inspect.self, Generate.self, Demo.self, Enable.self, Disable.self])

    /// Exit codes: 0 ok, 1 a connection or query error (message on stderr), 2 usage.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as PostgresError {
            FileHandle.standardError.write(Data("relate: \(error)\n".utf8))
            Foundation.exit(1)
        } catch let error as RelateError {
            FileHandle.standardError.write(Data("relate: \(error)\n".utf8))
            Foundation.exit(1)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}
