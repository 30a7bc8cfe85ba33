import FuzzSupport
import RelatePostgres

/// float4 and float8 read as `Double` and `Float` (header byte 0, 1), NaN, infinities,
/// subnormals and -0 included; the text form goes through `strtod`, which relies on the
/// NUL after a cell.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFloats(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data, size, [.scalar(Double.self), .scalar(Float.self)])
}
