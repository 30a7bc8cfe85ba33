import FuzzSupport
import RelatePostgres

/// int2, int4, int8 and oid read as `Int`, `Int32` and `Int16` (header byte 0, 1, 2): a
/// value that does not fit the Swift type, or text that is not an integer, must throw.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIntegers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data, size, [.scalar(Int.self), .scalar(Int32.self), .scalar(Int16.self)])
}
