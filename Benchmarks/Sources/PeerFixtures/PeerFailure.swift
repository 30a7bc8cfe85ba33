/// A peer side that cannot do its task (a missing row, a missing setup step).
package struct PeerFailure: Error, CustomStringConvertible {
    package var description: String
}
