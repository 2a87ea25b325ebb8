import ArgumentParser
import Foundation
import MediaIO
import Pipeline

struct Finish: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn a recording left fragmented (killed, power cut, disk full) into a regular .mov.",
        discussion: """
            A recording is written as a fragmented QuickTime file until it is stopped cleanly. \
            If dualcam was killed or the disk filled up, that file still plays; this makes it \
            the regular file (index first) a clean stop writes, by stream copy: nothing is \
            re-encoded. A fragment cut short at the end is left out. FILE is replaced \
            atomically unless -o is given.
            """)

    @Argument(help: "The fragmented recording.") var file: String
    @Option(name: .shortAndLong, help: ArgumentHelp("Write here instead of replacing FILE.", valueName: "OUT.mov"))
    var output: String?
    @Flag(help: "Replace OUT if it exists.") var overwrite = false

    func run() throws {
        FFmpegLog.setVerbose(false)
        if try finishWithIntermediate() { return }
        var st = stat()
        if stat(file, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw Failure("\(file) is a folder, not a recording") }
            // A named pipe's open would wait for a writer; a device is no recording.
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw Failure("\(file) is not a regular file: there is no recording to finish") }
            if st.st_size == 0 { try finishEmptyTake() }
        }
        guard try MovAtoms.isQuickTime(file) else {
            throw Failure("\(file): not a QuickTime or MP4 recording (nothing to finish)")
        }
        try finish(file, into: output, overwrite: overwrite)
        if output == nil { try finishCameras() }
    }

    /// A take that went on in an intermediate (`--encode auto` or `after`) and was killed
    /// before the stop encoded it: its pictures encoded as the take asked and joined to FILE's
    /// (FILE holds none with `after`), its sound copied; then it is removed. False when FILE
    /// has no intermediate beside it.
    private func finishWithIntermediate() throws -> Bool {
        let rest = Intermediate.path(for: file)
        guard let st = OutputPath.entry(rest) else { return false }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw Failure("\(rest) is not a regular file: move it away to finish \(file)")
        }
        let restLock = try RecordingLock.hold(rest)
        defer { if let restLock { close(restLock) } }
        guard let info = try Intermediate.read(rest) else {
            throw Failure("\(rest) is no intermediate of a dualcam take (it has no tag saying what it continues): move it "
                          + "away to finish \(file)")
        }
        let destination = output ?? file
        if output != nil { try OutputPath.check(destination, overwrite: overwrite, inputs: [file, rest]) }
        let held = OutputPath.entry(file) != nil ? try RecordingLock.hold(file) : nil
        defer { if let held { close(held) } }
        let started = monotonicNow()
        let line = TerminalLine.shared
        let progress: JoinProgress = { done, total in
            line.update("encoding \(done)" + (total > 0 ? "/\(total)" : "") + " frames of \(rest)")
        }
        let r: MovFinalizer.Result
        if info.fromFrame == 0 || Self.isEmptyTake(file) {
            // A take killed before its own file held a fragment starts where the intermediate does.
            var alone = info
            alone.fromFrame = 0
            r = try MovFinalizer.finalize(intermediate: rest, info: alone, into: destination, overwrite: output == nil || overwrite,
                                          holding: destination == file ? held : nil, progress: progress)
        } else {
            guard OutputPath.entry(file) != nil, try MovAtoms.isQuickTime(file), try MovAtoms.isFragmented(file) else {
                throw Failure("\(rest) continues the take in \(file) after its first \(info.fromFrame) frames, but \(file) is not "
                              + "that take (not a fragmented recording): nothing was changed")
            }
            r = try MovFinalizer.finalize(file, into: destination, overwrite: output == nil || overwrite, holding: held,
                                          rest: (rest, info), progress: progress)
        }
        line.clear()
        unlink(rest)
        print(String(format: "finished %@: %d frames (%.2f s), %d audio packets; the frames from %@ encoded and joined in %.1f s "
                     + "(it is removed)", destination, r.videoFrames, r.videoSeconds, r.audioPackets, rest, monotonicNow() - started))
        return true
    }

    /// A take's file as a kill before its first fragment leaves it: nothing, or the file type
    /// alone (the index waits for the first fragment).
    static func isEmptyTake(_ path: String) -> Bool {
        guard let st = OutputPath.entry(path), (st.st_mode & S_IFMT) == S_IFREG else { return false }
        if st.st_size == 0 { return true }
        guard let atoms = try? MovAtoms.topLevel(path) else { return false }
        return atoms.allSatisfy { ["ftyp", "free", "wide"].contains($0.type) }
    }

    /// A take recorded with --iso and killed: its cameras' own files are fragmented too.
    /// Returns those it finished.
    @discardableResult
    private func finishCameras() throws -> [String] {
        var finished: [String] = []
        for role in ["back", "front"] {
            let camera = IsoFiles.path(for: file, role: role)
            if OutputPath.entry(camera) != nil, (try? MovAtoms.isFragmented(camera)) == true {
                try finish(camera, into: nil, overwrite: false)
                finished.append(camera)
            }
        }
        return finished
    }

    /// A take killed before its first fragment was written is an empty file: nothing in it
    /// to finish (its cameras' own files, with --iso, may hold what was recorded).
    private func finishEmptyTake() throws -> Never {
        if let held = try RecordingLock.hold(file) { close(held) }
        let cameras = output == nil ? try finishCameras() : []
        throw Failure("\(file) is empty: its recording was stopped before the first frame was written, so there is nothing "
                      + "in it to finish" + (cameras.isEmpty ? "" : " (its cameras' own files were finished: "
                      + cameras.joined(separator: ", ") + ")"))
    }

    private func finish(_ file: String, into output: String?, overwrite: Bool) throws {
        guard try MovAtoms.isFragmented(file) else {
            if output == nil {
                print("\(file) is already a regular QuickTime file: nothing to do")
                return
            }
            throw Failure("\(file): not a fragmented recording (nothing to finish); copy it instead")
        }
        let destination = output ?? file
        // A live recording's file is not taken from under it: it finishes it itself.
        let held = try RecordingLock.hold(file)
        defer { if let held { close(held) } }
        if destination != file { try OutputPath.check(destination, overwrite: overwrite, inputs: [file]) }
        let r = try MovFinalizer.finalize(file, into: destination, overwrite: overwrite, holding: held)
        print(String(format: "finished %@: %d frames (%.2f s), %d audio packets%@", destination, r.videoFrames,
                     r.videoSeconds, r.audioPackets,
                     r.incompleteSamples > 0 ? ", \(r.incompleteSamples) samples cut short at the end left out" : ""))
    }
}
