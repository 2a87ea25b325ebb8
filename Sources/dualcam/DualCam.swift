import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

/// This release. Bumped by hand with each tagged version.
let dualcamVersion = "0.9.0"

@main
struct DualCam: ParsableCommand {
    /// Every way out of the program, in one place: a `Failure` is one line and its code, any
    /// other of our errors one line and 1, the argument parser's errors its usage and 64 (or
    /// help and 0). Nothing below here calls `exit`, so every `defer` on the way (the
    /// terminal's echo, a window, a camera) runs first.
    static func main() {
        var command: ParsableCommand
        do { command = try parseAsRoot() } catch { exit(withError: error) }
        do {
            try command.run()
        } catch let failure as Failure {
            leave(failure)
        } catch let error as MediaError {
            leave(Failure(error.description, code: error == .interrupted ? Interruption.exitCode : 1))
        } catch where Self.isArgumentParsers(error) {
            exit(withError: error)  // help asked for (`help compose`), a usage error, an exit code
        } catch {
            leave(Failure(String(describing: error)))
        }
    }

    /// The argument parser's own errors and requests (help, usage, CleanExit, ExitCode, the
    /// internal CommandError that `help SUBCOMMAND` throws): it prints and exits for them.
    private static func isArgumentParsers(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
    }

    private static func leave(_ failure: Failure) -> Never {
        TerminalLine.shared.clear()
        say(failure.message)
        Foundation.exit(failure.code)
    }

    static let configuration = CommandConfiguration(
        commandName: "dualcam",
        abstract: "Picture-in-picture video from two cameras or two files.",
        version: "dualcam \(dualcamVersion) (\(LibraryVersions.ffmpeg))",
        subcommands: [Compose.self, Record.self, Relayout.self, Finish.self, Devices.self, Controls.self, BenchCommand.self])
}

/// A failure as users and scripts see it: one line on stderr (`DualCam.main` prints it) and a
/// non-zero exit code (1; 2 for a benchmark gate's own; 128 + the signal for an interruption).
struct Failure: Error, CustomStringConvertible {
    let message: String
    let code: Int32
    init(_ message: String, code: Int32 = 1) {
        self.message = message
        self.code = code
    }
    var description: String { message }
}

/// One line on stderr, "dualcam: " first, above the progress or status line if one is
/// shown. Errors are ignored: with the terminal gone (a hang-up) the line has nowhere to go,
/// and the recording matters more than the message.
func say(_ message: String) {
    TerminalLine.shared.print(message: "dualcam: \(message)\n")
}
