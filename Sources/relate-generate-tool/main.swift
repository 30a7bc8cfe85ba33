import Foundation
import RelateCodeGen

// relate-generate-tool MODEL.json OUTPUT-DIRECTORY
//
// The RelateGenerator plugin's tool: Swift source from a checked-in `relate-model.json`
// (`relate inspect --format json`), the same bytes `relate generate` writes from the
// database. Exit codes: 0 written, 1 unreadable input, 2 usage.

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let input = arguments.first, let output = arguments.last else {
    FileHandle.standardError.write(Data("usage: relate-generate-tool MODEL.json OUTPUT-DIRECTORY\n".utf8))
    exit(2)
}
do {
    let snapshot = try ModelSnapshot(json: Data(contentsOf: URL(fileURLWithPath: input)))
    let directory = URL(fileURLWithPath: output, isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for file in try Generator(snapshot).files() {
        let url = directory.appendingPathComponent(file.name)
        // Unchanged files keep their date, so the build does not compile them again.
        if let existing = try? Data(contentsOf: url), existing == Data(file.contents.utf8) { continue }
        try Data(file.contents.utf8).write(to: url, options: .atomic)
    }
} catch {
    FileHandle.standardError.write(Data("relate-generate-tool: \(input): \(error)\n".utf8))
    exit(1)
}
