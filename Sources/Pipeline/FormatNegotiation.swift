import Compositor
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// The order in which a camera's formats and sizes are tried, and what happens when the
/// driver refuses to stream one. Two USB 2.0 webcams on one bus rarely both fit
/// uncompressed: the second STREAMON fails with ENOSPC, and MJPEG or a smaller size does fit.
struct FormatNegotiation {
    struct Choice: Equatable, CustomStringConvertible {
        var fourcc: FourCC
        var size: Size
        var description: String { "\(fourcc) \(size.width)x\(size.height)" }
    }

    enum Outcome<Started> {
        case started(Started)
        /// The driver substituted another format at S_FMT: not this candidate.
        case substituted
        /// S_FMT took it, STREAMON (or REQBUFS) refused it.
        case refused(V4L2Error)
    }

    let device: String
    /// Every format at the requested size first (cheapest to convert first), then smaller sizes.
    let choices: [Choice]

    init(device: String, formats: [FourCC], requested: Size, smallerSizes: [Size]) {
        self.device = device
        let sizes = [requested] + smallerSizes.filter { $0.width * $0.height < requested.width * requested.height }
            .sorted { $0.width * $0.height > $1.width * $1.height }
        var seen = Set<String>()
        choices = sizes.flatMap { s in formats.map { Choice(fourcc: $0, size: s) } }
            .filter { seen.insert($0.description).inserted }
    }

    /// A refusal that another format or size may cure. A device that is busy, gone or
    /// forbidden stays so whatever is asked of it.
    static func worthRetrying(_ e: V4L2Error) -> Bool {
        ![ENODEV, ENXIO, EBUSY, EACCES, EPERM].contains(e.code)
    }

    static func reason(_ e: V4L2Error) -> String {
        e.code == ENOSPC ? "not enough USB bandwidth (ENOSPC)" : String(cString: strerror(e.code))
    }

    /// Tries each choice in turn; logs every refusal with what comes next.
    func run<Started>(log: (String) -> Void,
                      attempt: (Choice) throws(V4L2Error) -> Outcome<Started>) throws(V4L2Error) -> Started {
        var lastRefusal: V4L2Error?
        for (i, choice) in choices.enumerated() {
            switch try attempt(choice) {
            case let .started(s): return s
            case .substituted: continue
            case let .refused(e):
                guard Self.worthRetrying(e) else { throw e }
                lastRefusal = e
                let next = choices[(i + 1)...].first.map { "trying \($0)" } ?? "nothing left to try"
                log("\(device): cannot stream \(choice): \(Self.reason(e)); \(next)")
            }
        }
        throw lastRefusal ?? V4L2Error(device: device, operation: "find a format it streams", code: EINVAL)
    }
}
