import FuzzSupport
import Foundation
import RelatePostgres

/// The decoders that mostly take the bytes as they come: `String` from the types whose
/// binary form is text (and jsonb's, after its version byte), `Data` from bytea (the text
/// form through libpq's `PQunescapeBytea`), `UUID` and `Bool` (header byte 0 to 3).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTextByteaUUIDBool(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data, size, [.scalar(String.self), .scalar(Data.self), .scalar(UUID.self), .scalar(Bool.self)])
}
