import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

/// This release. Bumped by hand with each tagged version.
let dualcamVersion = "0.9.0"

@main
struct DualCam: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dualcam",
        abstract: "Picture-in-picture video from two cameras or two files.",
        version: "dualcam \(dualcamVersion) (\(LibraryVersions.ffmpeg))",
        subcommands: [Compose.self, Record.self, Relayout.self, Finish.self, Devices.self, Controls.self, Bench.self])
}

/// Prints a failure as one line on stderr and exits non-zero: what users and scripts see.
func fail(_ message: String, code: Int32 = 1) -> Never {
    TerminalLine.shared.clear()
    say(message)
    exit(code)
}

/// One line on stderr, "dualcam: " first, above the progress or status line if one is
/// shown. Errors are ignored: with the terminal gone (a hang-up) the line has nowhere to go,
/// and the recording matters more than the message.
func say(_ message: String) {
    TerminalLine.shared.print(message: "dualcam: \(message)\n")
}
