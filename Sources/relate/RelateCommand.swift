import ArgumentParser
import Relate

@main
struct RelateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relate",
        abstract: "Point Relate at an existing PostgreSQL schema.",
        subcommands: [])
}
