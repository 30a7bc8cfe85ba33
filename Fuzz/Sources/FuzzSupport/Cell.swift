import RelatePostgres

/// Hands `body` the value as libpq hands a cell to a decoder: in memory of its own, exactly
/// as long as the value, so that AddressSanitizer reports any read past its end; the text
/// form with a NUL after it, which libpq guarantees and `strtod` relies on.
public func withCell<Result, Failure: Error>(
    _ value: some Collection<UInt8>, format: PostgresFormat,
    _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
) throws(Failure) -> Result {
    let terminator = format == .text ? 1 : 0
    let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: value.count + terminator, alignment: 1)
    defer { storage.deallocate() }
    storage.copyBytes(from: value)
    if terminator == 1 { storage[value.count] = 0 }
    return try body(UnsafeRawBufferPointer(rebasing: storage[..<value.count]))
}

/// Stops the run with a message libFuzzer records beside the input: a property that does
/// not hold is as much a finding as a trap in a decoder.
public func finding(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz finding: \(message)", file: file, line: line)
}
