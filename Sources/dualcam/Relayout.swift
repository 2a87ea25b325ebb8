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
        guard FileManager.default.fileExists(atPath: front) else {
            throw Failure("\(take) was recorded with one camera (no \((front as NSString).lastPathComponent)): there is no other picture to lay out")
        }
        var options = ComposeOptions(back: back, front: front, output: encoding.output)
        options.swaps = SwapSchedule(noSwaps ? [] : swapTimes.swapAt.isEmpty ? Self.recordedSwaps(take) : swapTimes.swapAt)
        options.audio = AudioChoice.none
        options.soundOf = take
        try Compose.execute(options, describing: "\(take)'s cameras", encoding: encoding, layout: layout, reporting: reporting,
                            previewOptions: previewOptions)
    }

    /// The swaps of the take (a swap at 0 when it started swapped); none, said once, when its
    /// sidecar is missing (a take that was killed) or unreadable.
    static func recordedSwaps(_ take: String) -> [Double] {
        let sidecar = IsoFiles.sidecar(for: take)
        guard let data = FileManager.default.contents(atPath: sidecar),
              let recorded = try? JSONDecoder().decode(IsoSidecar.self, from: data) else {
            say("\(sidecar) is missing or unreadable: laid out with no swaps (--swap-at gives some)")
            return []
        }
        return (recorded.startsSwapped ? [0] : []) + recorded.swaps
    }
}
