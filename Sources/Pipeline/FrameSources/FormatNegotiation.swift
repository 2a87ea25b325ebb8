import Compositor
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// The order in which a camera's formats and sizes are tried, why the first one that
/// streams was chosen, and what happens when the driver refuses to stream one.
///
/// A webcam's uncompressed modes are slow at large sizes (YUYV 1280x720 at 10 fps, 1920x1080
/// at 5, where MJPEG gives 30 at both), so the frame rate ranks before the cost of
/// conversion: at the asked size the formats that reach the asked rate come first (cheapest
/// to convert first); when none reaches it there, the largest size at which one does. A size
/// the user gave is kept whatever its rate. Two USB 2.0 webcams on one bus rarely both fit
/// uncompressed: the second STREAMON fails with ENOSPC, and the next choice is tried.
struct FormatNegotiation {
    struct Choice: Equatable, CustomStringConvertible {
        var fourcc: FourCC
        var size: Size
        /// The fastest rate the camera lists for this format and size; nil when it lists none.
        var fastest: Double? = nil
        /// False for a size the camera does not list for this format (the driver picks the
        /// nearest one it has).
        var listed = true
        var description: String { "\(fourcc) \(size.width)x\(size.height)" }
    }

    struct Request: Equatable {
        var size: Size
        var framesPerSecond: Double
        /// The size was asked for (`--capture`): it is kept even when it is slow.
        var sizeGiven = false
    }

    enum Outcome<Started> {
        case started(Started)
        /// The driver substituted another format at S_FMT: not this candidate.
        case substituted
        /// S_FMT took it, STREAMON (or REQBUFS) refused it.
        case refused(V4L2Error)
    }

    let device: String
    let request: Request
    let choices: [Choice]

    /// `formats`: the formats to use, cheapest to convert first; `offered`: what the camera
    /// lists for them (sizes and frame intervals).
    init(device: String, formats: [FourCC], offered: [CaptureDeviceInfo.Format], request: Request) {
        self.device = device
        self.request = request
        let area = request.size.width * request.size.height
        var listed: [(choice: Choice, cost: Int)] = []
        var unlisted: [(choice: Choice, cost: Int)] = []
        var seen = Set<String>()
        for (cost, fourcc) in formats.enumerated() {
            // A native entry speaks for the camera; libv4l2's emulated one only when there is none.
            let entries = offered.filter { $0.fourcc == fourcc.description }
            if entries.isEmpty { continue }
            let modes = (entries.first { !$0.emulated } ?? entries.first)?.modes ?? []
            for m in modes where m.width * m.height <= area {
                let c = Choice(fourcc: fourcc, size: Size(width: m.width, height: m.height), fastest: m.framesPerSecond.max())
                if seen.insert(c.description).inserted { listed.append((c, cost)) }
            }
            let asked = Choice(fourcc: fourcc, size: request.size, listed: false)
            if seen.insert(asked.description).inserted {
                // A camera that lists no size for a format is taken at its word at any size.
                if modes.isEmpty { listed.append((asked, cost)) } else { unlisted.append((asked, cost)) }
            }
        }
        let fps = request.framesPerSecond
        func reaches(_ c: Choice) -> Bool { c.fastest.map { Self.reaches($0, fps) } ?? true }
        func areaOf(_ c: Choice) -> Int { c.size.width * c.size.height }
        func key(_ e: (choice: Choice, cost: Int)) -> [Double] {
            let c = e.choice
            if request.sizeGiven {
                // The size asked, fastest formats first; smaller sizes only when it cannot stream.
                return [c.size == request.size ? 0 : 1, Double(-areaOf(c)), reaches(c) ? 0 : 1, Double(e.cost)]
            }
            if reaches(c) { return [0, Double(-areaOf(c)), Double(e.cost)] }
            return [1, -(c.fastest ?? 0), Double(-areaOf(c)), Double(e.cost)]
        }
        choices = (listed.sorted { key($0).lexicographicallyPrecedes(key($1)) }
            + unlisted.sorted { key($0).lexicographicallyPrecedes(key($1)) }).map(\.choice)
    }

    /// A rate within 2 % of the asked one reaches it (29.97 fps reaches 30).
    static func reaches(_ rate: Double, _ asked: Double) -> Bool { rate >= asked * 0.98 }

    /// A refusal that another format or size may cure. A device that is busy, gone or
    /// forbidden stays so whatever is asked of it.
    static func worthRetrying(_ e: V4L2Error) -> Bool {
        ![ENODEV, ENXIO, EBUSY, EACCES, EPERM].contains(e.code)
    }

    static func reason(_ e: V4L2Error) -> String {
        e.code == ENOSPC ? "not enough USB bandwidth (ENOSPC)" : String(cString: strerror(e.code))
    }

    /// Tries each choice in turn; logs every refusal with what comes next. Returns what
    /// started and the choice it came from.
    func run<Started>(log: (String) -> Void,
                      attempt: (Choice) throws(V4L2Error) -> Outcome<Started>) throws(V4L2Error) -> (Started, Choice) {
        var lastRefusal: V4L2Error?
        for (i, choice) in choices.enumerated() {
            switch try attempt(choice) {
            case let .started(s): return (s, choice)
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

    static func rateText(_ r: Double) -> String { String(format: "%g", (r * 100).rounded() / 100) }

    /// Why `chosen` (which streams at `rate` fps, 0 when the driver does not say), in words
    /// for the log; nil when it is simply the first choice at the asked size and rate.
    /// `isWarning`: the camera will deliver fewer pictures than asked.
    func explanation(of chosen: Choice, rate: Double) -> (text: String, isWarning: Bool)? {
        let fps = request.framesPerSecond
        let effective = rate > 0 ? rate : chosen.fastest
        let asked = "\(Self.rateText(fps)) fps"
        if let effective, !Self.reaches(effective, fps) {
            let better = choices.first { c in c.fastest.map { Self.reaches($0, fps) } ?? false }
            let advice = better.map { "\($0) reaches it" + (request.sizeGiven ? " (--capture \($0.size))" : "") }
                ?? "no mode of this camera reaches it"
            return ("warning: \(device): \(chosen) reaches only \(Self.rateText(effective)) fps, under the \(asked) asked: "
                    + "pictures will repeat; \(advice)", true)
        }
        // The fastest of the formats passed over at the asked size for being too slow (the
        // cheapest of equals).
        let slowerAtSize = choices.filter { c in
            c.size == request.size && c.listed && c != chosen && c.fastest.map { !Self.reaches($0, fps) } == true
        }
        let fastestTooSlow = slowerAtSize.reduce(nil as Choice?) { best, c in
            (best?.fastest ?? -1) >= (c.fastest ?? 0) ? best : c
        }
        if chosen.size == request.size {
            guard let slow = fastestTooSlow, let r = slow.fastest else { return nil }
            return ("\(slow.fourcc) reaches only \(Self.rateText(r)) fps at \(request.size): \(chosen.fourcc) at \(asked)", false)
        }
        // A size given and refused: the refusals were told as they came.
        if request.sizeGiven { return nil }
        if let slow = fastestTooSlow, let r = slow.fastest {
            return ("\(slow) reaches only \(Self.rateText(r)) fps: \(chosen.size) at \(asked)", false)
        }
        return ("\(request.size) is not offered: \(chosen.size) at \(asked)", false)
    }
}
