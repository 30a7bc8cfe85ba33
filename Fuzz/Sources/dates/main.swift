import FuzzSupport
import Foundation
import RelatePostgres

/// date, timestamp and timestamptz read as `Date` (header byte 0): the binary forms
/// (days and microseconds since 2000, with ±infinity at the integer's ends) and the ISO
/// text form with its offsets and BC.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDates(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data, size, [.scalar(Date.self)])
}
