import Foundation
import RelateCodeGen

// relate-generate-tool MODEL.json OUTPUT-DIRECTORY [relate-generate.json]
//
// The RelateGenerator plugin's tool: Swift source from a checked-in `relate-model.json`
// (`relate inspect --format json`) and the `relate-generate.json` beside it, if any, the
// same bytes `relate generate` writes from the database. Exit codes: 0 written,
// 1 unreadable input, 2 usage.

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 || arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: relate-generate-tool MODEL.json OUTPUT-DIRECTORY [relate-generate.json]\n".utf8))
    exit(2)
}
let input = arguments[0], output = arguments[1]
do {
    let snapshot = try ModelSnapshot(json: Data(contentsOf: URL(fileURLWithPath: input)))
    let configuration = try arguments.count == 3
        ? GeneratorConfiguration(json: Data(contentsOf: URL(fileURLWithPath: arguments[2]))) : GeneratorConfiguration()
    let directory = URL(fileURLWithPath: output, isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for file in try Generator(snapshot, configuration: configuration).files() {
        let url = directory.appendingPathComponent(file.name)
        // Unchanged files keep their date, so the build does not compile them again.
        if let existing = try? Data(contentsOf: url), existing == Data(file.contents.utf8) { continue }
        try Data(file.contents.utf8).write(to: url, options: .atomic)
    }
} catch {
    FileHandle.standardError.write(Data("relate-generate-tool: \(input): \(error)\n".utf8))
    exit(1)
}
