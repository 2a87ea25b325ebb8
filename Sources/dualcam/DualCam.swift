import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline


@main
struct DualCam: ParsableCommand {
    /// Every way out of the program, in one place: a `Failure` is one line and its code, any
    /// other of our errors one line and 1, the argument parser's errors its usage and 64 (or
    /// help and 0). Nothing below here calls `exit`, so every `defer` on the way (the
    /// terminal's echo, a window, a camera) runs first.
    static func main() {
        // From the first instant a stop signal ends the process in one line, exit 128 + it (at
        // 80 ms, before a command installed its own handling, SIGTERM's default action ended
        // it with no word); each command then says how it is stopped.
        Interruption.install()
        Interruption.exitAtOnceUntilStarted(true)
        let arguments: [String]
        switch ByteFolders.arguments(CommandWord.argumentBytes()) {
        case let .success(given): arguments = given
        case let .failure(refusal): leave(Failure(refusal.description, code: 64))
        }
        if let early = CommandWord.check(arguments) { leave(early) }
        var command: ParsableCommand
        do { command = try parseAsRoot(arguments) } catch { exitForParser(error) }
        do {
            try command.run()
        } catch let failure as Failure {
            leave(failure)
        } catch let error as MediaError {
            // A stop can reach a decoder mid-read first: its "Immediate exit requested" then
            // came out as a damaged input, exit 1. The stop is what happened.
            let stopped = error == .interrupted || Interruption.requested
            leave(Failure(stopped ? MediaError.interrupted.description : error.description,
                          code: stopped ? Interruption.exitCode : 1))
        } catch where Self.isArgumentParsers(error) {
            exitForParser(error)  // help asked for (`help compose`), a usage error, an exit code
        } catch {
            leave(Failure(String(describing: error)))
        }
    }

    /// The argument parser's own errors and requests (help, usage, CleanExit, ExitCode, the
    /// internal CommandError that `help SUBCOMMAND` throws): it prints and exits for them.
    private static func isArgumentParsers(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
    }

    /// The parser's way out, with one change: help shows a command's EXAMPLES (written at the
    /// end of its discussion, where the man page takes them from) last, after the options, as
    /// man pages and git's help do.
    /// Its errors start "dualcam: " as every other error line does, not "Error: ".
    private static func exitForParser(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code != .success {
            let message = fullMessage(for: error)
            if !message.isEmpty {
                TerminalLine.shared.clear()
                writeToStandardError((message.hasPrefix("Error: ") ? "dualcam: " + message.dropFirst(7) : message) + "\n")
            }
            Foundation.exit(code.rawValue)
        }
        guard case let message = fullMessage(for: error), message.contains("USAGE:") else { exit(withError: error) }
        print(HelpText.examplesLast(message))
        Foundation.exit(0)
    }

    private static func leave(_ failure: Failure) -> Never {
        TerminalLine.shared.clear()
        if failure.prefixed { say(failure.message) } else { TerminalLine.shared.print(message: failure.message + "\n") }
        Foundation.exit(failure.code)
    }

    static let configuration = CommandConfiguration(
        commandName: "dualcam",
        abstract: "Picture-in-picture video from two cameras or two files.",
        version: "dualcam \(dualcamVersion) (\(LibraryVersions.ffmpeg))",
        subcommands: [Compose.self, Record.self, Relayout.self, Finish.self, Batch.self, Devices.self, Controls.self, Doctor.self, BenchCommand.self])
}

/// A failure as users and scripts see it: one line on stderr (`DualCam.main` prints it) and a
/// non-zero exit code (1; 2 for a benchmark gate's own; 128 + the signal for an interruption).
struct Failure: Error, CustomStringConvertible {
    let message: String
    let code: Int32
    /// Whether the line starts "dualcam: " (a usage text does not).
    let prefixed: Bool
    init(_ message: String, code: Int32 = 1, prefixed: Bool = true) {
        self.message = message
        self.code = code
        self.prefixed = prefixed
    }
    var description: String { message }
}

/// A line of a human summary or listing on stdout. Control characters in it (from a file's
/// name: an escape sequence sets the terminal's title or clears it) are shown as text, as on
/// stderr; `--json` is the form for scripts, with names exactly as they are.
func printLine(_ line: String) {
    print(TerminalLine.printable(line))
}

/// One line on stderr, "dualcam: " first, above the progress or status line if one is
/// shown. Errors are ignored: with the terminal gone (a hang-up) the line has nowhere to go,
/// and the recording matters more than the message.
func say(_ message: String) {
    TerminalLine.shared.print(message: "dualcam: \(TerminalLine.printable(message))\n")
}
