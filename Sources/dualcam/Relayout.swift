import ArgumentParser
import Foundation
import MediaIO
import Pipeline

/// relayout's `--no-swaps`.
struct NoSwapsOption: ParsableArguments {
    @Flag(help: "No swaps: BACK full frame (or on the left) throughout, instead of the take's swaps.") var noSwaps = false
}

struct Relayout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compose a take recorded with --iso again from its cameras' own files.",
        discussion: """
            TAKE.back.mov and TAKE.front.mov (written beside TAKE.mov by record --iso) are \
            composed as compose would, with the take's own sound, frame for frame in step with \
            it. The swaps made while recording are kept (from TAKE.dualcam.json) unless \
            --swap-at gives others or --no-swaps drops them; the layout is compose's: another \
            corner, another inset, or --layout side-by-side.

            EXAMPLES:
              Record with each camera's own file kept, then lay the take out side by side:
                dualcam record -o take.mov --iso
                dualcam relayout take.mov -o take-sbs.mov --layout side-by-side
              The same take with the inset bottom left and no swaps:
                dualcam relayout take.mov -o take-plain.mov --corner bottom-left \\
                  --no-swaps
            """)

    @Argument(help: "The take, recorded with record --iso.", completion: .file(extensions: ["mov", "mp4"])) var take: String
    @OptionGroup(title: "Output") var encoding: EncodingOptions
    @OptionGroup(title: "Encoding") var encoder: EncoderOptions
    @OptionGroup(title: "Layout") var layout: LayoutOptions
    @OptionGroup(title: "Swaps") var swapTimes: SwapTimes
    @OptionGroup(title: "Swaps") var swapChoice: NoSwapsOption
    @OptionGroup(title: "Messages") var reporting: ReportingOptions
    @OptionGroup(title: "Preview") var previewOptions: PreviewOptions

    var noSwaps: Bool { swapChoice.noSwaps }

    func validate() throws {
        _ = try layout.layout(canvas: encoding.format.canvas)
        if noSwaps && !swapTimes.swapAt.isEmpty { throw ValidationError("--no-swaps and --swap-at ask for different things: give one") }
    }

    func run() throws {
        FFmpegLog.setVerbose(reporting.verbose)
        let back = IsoFiles.path(for: take, role: "back"), front = IsoFiles.path(for: take, role: "front")
        guard FileManager.default.fileExists(atPath: take) else { throw Failure("\(take): No such file or directory") }
        // A take being recorded is laid out once it ends (two seconds of a 5 s take were, exit 0).
        let probe = open(take, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if probe >= 0 {
            defer { close(probe) }
            guard RecordingLock.take(probe) else {
                throw Failure("\(take) is being recorded right now: lay it out again once its recording has ended")
            }
        }
        guard FileManager.default.fileExists(atPath: back) else {
            if let id = Intermediate.takeID(of: take), case let moves = IsoFiles.underAnOldName(of: take, takeID: id), !moves.isEmpty {
                throw Failure("\(take)'s cameras' own files are under its old name (\(moves.map(\.file).joined(separator: ", "))): "
                              + "\(IsoFiles.renaming(moves, take: take)) lets relayout find them")
            }
            throw Failure("\(take) has no cameras' own files beside it (\((back as NSString).lastPathComponent)): record with --iso to lay a take out again")
        }
        guard FileManager.default.fileExists(atPath: front) else {
            let name = (front as NSString).lastPathComponent
            // The sidecar says whether there was a front camera: its file moved away is not a take of one.
            if Self.recorded(take)?.cameras["front"] != nil {
                throw Failure("\(front) is missing: the take had two cameras, and this is the front one's own file; "
                              + "put it back beside \(take) to lay the take out again")
            }
            throw Failure("\(take) was recorded with one camera (no \(name)): there is no other picture to lay out")
        }
        let identity = Intermediate.takeID(of: take)
        // A camera file a kill left before its first byte carries no identity to compare: it
        // is empty, not another take's.
        for camera in [back, front] where OutputPath.entry(camera).map({ $0.st_size == 0 }) == true {
            throw Failure("\(camera) is empty: the take was stopped or killed as it began, and there is no picture to lay out")
        }
        for camera in [back, front] where Intermediate.takeID(of: camera) != identity {
            throw Failure("\(camera) is not \(take)'s own camera file: it was written by another take (an earlier one under the same "
                          + "name); nothing was written")
        }
        let recorded = Self.recorded(take)
        let foreignSidecar = recorded.map { $0.takeID != identity } ?? false
        var options = ComposeOptions(back: back, front: front, output: encoding.output)
        let usesRecorded = !noSwaps && swapTimes.swapAt.isEmpty
        if usesRecorded && foreignSidecar {
            say("\(IsoFiles.sidecar(for: take)) was written by another take: laid out with no swaps (--swap-at gives some)")
        }
        options.swaps = SwapSchedule(noSwaps || (usesRecorded && foreignSidecar) ? []
                                     : usesRecorded ? Self.recordedSwaps(take, recorded) : swapTimes.swapAt)
        if usesRecorded { options.swapsNamed = "the swap recorded at" }
        if let stoppedAt = recorded?.stoppedAt, !foreignSidecar {
            say(String(format: "the cameras' own files stop at %.2f s of the take (the disk had room for the take alone after that): "
                       + "laid out up to there", stoppedAt))
        }
        options.audio = AudioChoice.none
        options.soundOf = take
        try Compose.execute(options, describing: "\(take)'s cameras", encoding: encoding, encoder: encoder, layout: layout, reporting: reporting,
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
        return try? IsoSidecar.decoded(from: data)
    }
}
