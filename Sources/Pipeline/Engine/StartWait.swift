/// Whether a recording's file waits, at its start, for the other camera's first picture, so
/// that it opens with both: cameras take different times to deliver (a second or more for
/// some), and a file whose first frames lack the inset looks like a camera failed. Not for
/// ever: `limit` seconds after the driving camera's first picture the file starts with what
/// there is, and the other camera joins at its first picture, as one plugged in later does.
struct StartWait {
    static let limit = 1.0
    private var firstPictureAt: Double?

    /// `otherHasPicture`: nil with one camera; `now`: when the driving camera's picture came.
    mutating func holds(otherHasPicture: Bool?, now: Double) -> Bool {
        guard otherHasPicture == false else { return false }
        let first = firstPictureAt ?? now
        firstPictureAt = first
        return now - first < Self.limit
    }
}
