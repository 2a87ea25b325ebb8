import ArgumentParser
import Foundation
import MediaIO
import Pipeline

struct Relayout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compose a take recorded with --iso again from its cameras' own files.",
        discussion: """
            TAKE.back.mov and TAKE.front.mov (written beside TAKE.mov by record --iso) are \
            composed as compose would, with the take's own sound, frame for frame in step with \
            it. The swaps made while recording are kept (from TAKE.dualcam.json) unless \
            --swap-at gives others or --no-swaps drops them; the layout is compose's: another \
            corner, another inset, or --layout side-by-side.
            """)

    @Argument(help: "The take, recorded with record --iso.") var take: String
    @OptionGroup var encoding: EncodingOptions
    @OptionGroup var layout: LayoutOptions
    @OptionGroup var reporting: ReportingOptions
    @OptionGroup var previewOptions: PreviewOptions

    @OptionGroup var swapTimes: SwapTimes

    @Flag(help: "No swaps: the back camera full frame (or on the left) throughout.") var noSwaps = false

    func validate() throws {
        _ = try layout.layout(canvas: encoding.format.canvas)
        if noSwaps && !swapTimes.swapAt.isEmpty { throw ValidationError("--no-swaps and --swap-at ask for different things: give one") }
    }

    func run() throws {
        FFmpegLog.setVerbose(encoding.verbose)
        let back = IsoFiles.path(for: take, role: "back"), front = IsoFiles.path(for: take, role: "front")
        guard FileManager.default.fileExists(atPath: take) else { throw Failure("\(take): No such file or directory") }
        guard FileManager.default.fileExists(atPath: back) else {
            throw Failure("\(take) has no cameras' own files beside it (\((back as NSString).lastPathComponent)): record with --iso to lay a take out again")
        }
        let recorded = Self.recorded(take)
        guard FileManager.default.fileExists(atPath: front) else {
            throw Failure("\(take) was recorded with one camera (no \((front as NSString).lastPathComponent)): there is no other picture to lay out")
        }
        var options = ComposeOptions(back: back, front: front, output: encoding.output)
        let usesRecorded = !noSwaps && swapTimes.swapAt.isEmpty
        options.swaps = SwapSchedule(noSwaps ? [] : usesRecorded ? Self.recordedSwaps(take, recorded) : swapTimes.swapAt)
        if usesRecorded { options.swapsNamed = "the swap recorded at" }
        options.audio = AudioChoice.none
        options.soundOf = take
        try Compose.execute(options, describing: "\(take)'s cameras", encoding: encoding, layout: layout, reporting: reporting,
                            previewOptions: previewOptions)
    }

    /// The swaps of the take (a swap at 0 when it started swapped); none, said once, when its
    /// sidecar is missing (a take that was killed) or unreadable.
    static func recordedSwaps(_ take: String, _ recorded: IsoSidecar?) -> [Double] {
        let sidecar = IsoFiles.sidecar(for: take)
        guard let recorded else {
            say("\(sidecar) is missing or unreadable: laid out with no swaps (--swap-at gives some)")
            return []
        }
        // Written by record: times of the take, in order. Anything else was not.
        let swaps = recorded.swaps
        guard swaps.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= Record.longestDuration }),
              zip(swaps, swaps.dropFirst()).allSatisfy({ $0 < $1 }) else {
            say("\(sidecar): its swaps are not times of the take in order: laid out with no swaps (--swap-at gives some)")
            return []
        }
        return (recorded.startsSwapped ? [0] : []) + swaps
    }

    /// The take's sidecar, if it is there and readable.
    static func recorded(_ take: String) -> IsoSidecar? {
        // A sidecar is a few hundred bytes in a regular file (a named pipe's open would wait for
        // a writer), beside the take: anything else was not written by record.
        let path = IsoFiles.sidecar(for: take)
        var st = stat()
        // Not through a link: it could lead anywhere, outside the take's folder too.
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size < 1 << 20,
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(IsoSidecar.self, from: data)
    }
}
