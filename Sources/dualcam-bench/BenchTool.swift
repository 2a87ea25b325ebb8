import ArgumentParser
import Foundation
import MediaIO

/// `dualcam bench`: the benchmark harness, a program of its own so that the recorder users
/// run links no valgrind, perf-event or benchmark code. `dualcam bench ...` runs it (it is
/// installed beside `dualcam`); CI and scripts may call it directly.
@main
enum BenchTool {
    /// As `dualcam`'s main: a `BenchFailure` is one line and its code; a regression found by
    /// the gate is exit 1; the argument parser's own errors are its usage and 64.
    static func main() {
        let command: Bench
        do { command = try Bench.parse() } catch {
            // Help shows the EXAMPLES last, as dualcam's does.
            if Bench.exitCode(for: error) == .success, case let help = Bench.fullMessage(for: error), help.contains("USAGE:") {
                print(HelpText.examplesLast(help))
                exit(0)
            }
            Bench.exit(withError: error)
        }
        do {
            try command.run()
        } catch let failure as BenchFailure {
            writeToStandardError("dualcam: \(failure.message)\n")
            exit(failure.code)
        } catch {
            Bench.exit(withError: error)
        }
    }
}

/// A benchmark run that could not be judged (a baseline that cannot be used, a counter that
/// is not there): one line and exit 2, as a regression is not (that is 1).
struct BenchFailure: Error, CustomStringConvertible {
    let message: String
    let code: Int32
    var description: String { message }
}
