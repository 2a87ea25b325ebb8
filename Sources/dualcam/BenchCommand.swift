import ArgumentParser
import Foundation

/// `dualcam bench ...` runs `dualcam-bench`, installed beside this program: the harness and
/// its counters (valgrind, perf events) stay out of the recorder's binary, and the command
/// people and CI scripts know keeps working.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure per-frame latency of the product's paths, against libswscale doing the same work.",
        discussion: """
            Runs dualcam-bench, installed beside dualcam; `dualcam bench --help` shows its options \
            and man dualcam-bench the whole page.

            EXAMPLES:
              The cases, and which run by default:
                dualcam bench --list-cases
              Gate a build on instruction counts saved earlier:
                dualcam bench --instructions --baseline bench-baseline.json
            """)

    @Argument(parsing: .captureForPassthrough, help: "What dualcam-bench takes (see `dualcam bench --help`).",
              completion: .custom { arguments, index, prefix in Completions.bench(arguments, index: index, prefix: prefix) })
    var arguments: [String] = []

    /// The harness beside this program (the build folder, PREFIX/bin), whatever name or link
    /// it was started by.
    static var harness: String {
        let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        return here.appendingPathComponent("dualcam-bench").path
    }

    func run() throws {
        let path = Self.harness
        guard access(path, X_OK) == 0 else {
            let what = access(path, F_OK) == 0 ? "is there but cannot be run by this user" : "is not there"
            throw Failure("bench: \(path) \(what): the benchmark harness is a program of its own "
                          + "(swift build --product dualcam-bench, or Scripts/install.sh, puts it beside dualcam)")
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        fflush(nil)
        execv(path, argv)
        throw Failure("bench: cannot run \(path): \(String(cString: strerror(errno)))")
    }
}
