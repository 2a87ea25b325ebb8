import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

@main
struct DualCam: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dualcam",
        abstract: "Picture-in-picture video from two cameras or two files.",
        subcommands: [Compose.self, Record.self, Devices.self, Bench.self])
}

/// Prints a failure as one line on stderr and exits non-zero: what users and scripts see.
func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("dualcam: \(message)\n".utf8))
    exit(code)
}
