import FuzzSupport
import Foundation
import RelatePostgres

/// Arrays of every element type (header byte 0 to 10: Int, Int32, Int16, Double, Float,
/// Decimal, Bool, Date, UUID, Data, String), with NULLs, several dimensions and lower
/// bounds, in both forms: the binary form's counts and lengths come from the bytes, and
/// must never be trusted further than the bytes go.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArrays(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data, size, [
        .array(of: Int.self), .array(of: Int32.self), .array(of: Int16.self), .array(of: Double.self),
        .array(of: Float.self), .array(of: Decimal.self), .array(of: Bool.self), .array(of: Date.self),
        .array(of: UUID.self), .array(of: Data.self), .array(of: String.self),
    ])
}
