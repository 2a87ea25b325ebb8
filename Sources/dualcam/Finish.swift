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
            re-encoded. A fragment cut short at the end is left out. When the take went on in \
            FILE.intermediate.mov (the encoder could not keep up, or --encode after), the \
            intermediate's frames are encoded as the take asked and joined to FILE's, its \
            sound copied, and it is removed (kept with -o). FILE is replaced atomically \
            unless -o is given.

            EXAMPLES:
              Make the take a regular file in place:
                dualcam finish take.mov
              Keep the fragmented take as it is, write the finished one beside it:
                dualcam finish take.mov -o take-finished.mov
            """)

    @Argument(help: "The fragmented recording.", completion: .file(extensions: ["mov", "mp4"])) var file: String
    @Option(name: .shortAndLong, help: ArgumentHelp("Write here instead of replacing FILE.", valueName: "OUT.mov"),
            completion: .file(extensions: ["mov", "mp4"]))
    var output: String?
    @Flag(help: "Replace OUT if it exists.") var overwrite = false

    func validate() throws {
        if let output { try OutputName.validate(output) }
    }

    func run() throws {
        FFmpegLog.setVerbose(false)
        // Until the finished file takes its name it has none (an unnamed file): a stop leaves
        // everything as it was, and finishing again is all there is to do.
        Interruption.install()
        Interruption.exitAtOnce(saying: "interrupted; dualcam finish \(TerminalLine.printable(file)) again finishes it")
        do { try finishTake() } catch let error as MediaError where "\(error)".hasSuffix(String(cString: strerror(ENOSPC))) {
            // Finishing needs as much room again as the take: often what a full disk lacks.
            throw Failure("\(error): the take is as it was; free some space, or write the finished file on another disk: "
                          + "dualcam finish \(file) -o OTHER-DISK/NAME.mov")
        }
    }

    private func finishTake() throws {
        // Opened without following links (what a link leads to could be anything): said so,
        // with where it leads, instead of "Too many levels of symbolic links".
        if let st = OutputPath.entry(file), (st.st_mode & S_IFMT) == S_IFLNK {
            let target = realpath(file, nil).map { p in defer { free(p) }; return String(cString: p) }
            throw Failure("\(file) is a symbolic link" + (target.map { ": finish the take where it is, dualcam finish \($0)" }
                                                          ?? " that leads nowhere: there is no recording to finish"))
        }
        let intermediate = try finishWithIntermediate()
        if intermediate == .joined {
            // Its cameras' own files too (an --iso take's were left fragmented until a second finish).
            if output == nil { try finishCameras() }
            return
        }
        var st = stat()
        if stat(file, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw Failure("\(file) is a folder, not a recording") }
            // A named pipe's open would wait for a writer; a device is no recording.
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw Failure("\(file) is not a regular file: there is no recording to finish") }
            // Before anything is said of what it holds: a file another program is writing may
            // hold only its header yet (it was called "empty").
            if !RecordingLock.isHeld(file) { try Self.refuseWhileWritten(file) }
            if st.st_size == 0 || Self.isEmptyTake(file) { try finishEmptyTake(intermediateSeen: intermediate == .removedEmpty) }
        }
        guard try MovAtoms.isQuickTime(file) else {
            throw Failure("\(file): not a QuickTime or MP4 recording (nothing to finish)")
        }
        try finish(file, into: output, overwrite: overwrite)
        if output == nil { try finishCameras() }
    }

    /// A take that went on in an intermediate (`--encode auto` or `after`) and was killed
    /// before the stop encoded it: its pictures encoded as the take asked and joined to FILE's
    /// (FILE holds none with `after`), its sound copied; then it is removed. Joined only to its
    /// own take (the identity both carry); false when FILE has no intermediate beside it.
    private enum IntermediateOutcome { case joined, none, removedEmpty }

    private func finishWithIntermediate() throws -> IntermediateOutcome {
        // Only a regular file is opened to read its tag: a named pipe's open waits for a
        // writer (what else FILE may be is said by the checks after this).
        if let st = OutputPath.entry(file), (st.st_mode & S_IFMT) != S_IFREG { return .none }
        if OutputPath.entry(file) != nil, case let .intermediate(info) = try? Intermediate.read(file) {
            throw Failure("\(file) is the intermediate of a take (its frames from \(info.fromFrame) on): " + Self.wayToFinish(file, info))
        }
        // Its intermediate by name, or (the take renamed after a kill) by the identity both carry.
        var rest = Intermediate.path(for: file)
        if OutputPath.entry(rest) == nil, OutputPath.entry(file) != nil, let identity = Intermediate.takeID(of: file),
           let found = Intermediate.companions(of: identity, besides: file, intermediates: true).first {
            printLine("\(file)'s intermediate is \(found), found by the take's identity under another name: it is joined from there")
            rest = found
        }
        guard let st = OutputPath.entry(rest) else { return .none }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw Failure("\(rest) is not a regular file: move it away to finish \(file)")
        }
        let restLock = try Self.hold(rest)
        defer { if let restLock { close(restLock) } }
        try Self.refuseWhileWritten(rest)
        if try removedEmptyIntermediate(rest, size: Int64(st.st_size)) { return .removedEmpty }
        let info: Intermediate
        switch try Intermediate.read(rest) {
        case .none:
            throw Failure("\(rest) is no intermediate of a dualcam take (it has no tag saying what it continues): move it "
                          + "away to finish \(file)")
        case let .unreadable(tag):
            throw Failure("\(rest): its tag cannot be read (\(tag)): nothing was changed")
        case let .intermediate(read): info = read
        }
        let held = OutputPath.entry(file) != nil ? try Self.hold(file) : nil
        defer { if let held { close(held) } }
        if try isJoinedAlready(info, rest: rest) { return .joined }
        if OutputPath.entry(file) != nil { try Self.refuseWhileWritten(file) }
        let (alone, missing) = try joinsAlone(info, rest: rest)
        let destination = output ?? file
        if output != nil { try OutputPath.check(destination, overwrite: overwrite, inputs: [file, rest]) }
        let started = monotonicNow()
        let line = TerminalLine.shared
        // Off a terminal (a log, a pipe) one line says what the wait is for.
        let announced = Locked(line.enabled)
        let progress: JoinProgress = { done, total in
            line.update("encoding \(done)" + (total > 0 ? "/\(total)" : "") + " frames of \(rest)")
            if announced.withLock({ was in defer { was = true }; return !was }) {
                printLine("encoding " + (total > 0 ? "\(total) frames" : "the frames") + " of \(rest) to join them to \(file)")
            }
        }
        let r: MovFinalizer.Result
        if alone {
            var whole = info
            whole.fromFrame = 0
            r = try MovFinalizer.finalize(intermediate: rest, info: whole, into: destination, overwrite: output == nil || overwrite,
                                          holding: destination == file ? held : nil, progress: progress)
        } else {
            r = try MovFinalizer.finalize(file, into: destination, overwrite: output == nil || overwrite, holding: held,
                                          rest: (rest, info), progress: progress)
        }
        line.clear()
        let removed = output != nil ? "it is kept, as FILE is" : unlink(rest) == 0 ? "it is removed"
            : "it could not be removed: \(String(cString: strerror(errno)))"
        let fps = Double(info.settings.framesPerSecond)
        let lost = missing > 0 ? String(format: "; %d frame%@ (%.2f s) the kill left unwritten before the intermediate %@ missing",
                                        missing, missing == 1 ? "" : "s", Double(missing) / fps, missing == 1 ? "is" : "are") : ""
        printLine(String(format: "finished %@: %d frames (%.2f s), %d audio packets; the frames from %@ encoded and joined in %.1f s "
                     + "(%@)%@", destination, r.videoFrames, r.videoSeconds, r.audioPackets, rest, monotonicNow() - started, removed, lost))
        return .joined
    }

    /// The take finished with its intermediate joined, the intermediate still there: a stop
    /// (or kill) between the finished file taking the take's name and the intermediate's
    /// removal. The finished file is the take's (its identity) and holds the intermediate's
    /// frames; in place the leftover is removed, with -o there is nothing to write.
    private func isJoinedAlready(_ info: Intermediate, rest: String) throws -> Bool {
        guard OutputPath.entry(file) != nil, !Self.isEmptyTake(file), Intermediate.takeID(of: file) == info.takeID,
              try !MovAtoms.isFragmented(file), try MovAtoms.isWholeMovie(file),
              try TakeRecovery.holdsItsIntermediate(frames: MovFinalizer.videoPacketCount(file), Self.rest(info, at: rest))
        else { return false }
        guard output == nil else {
            throw Failure("\(file) is already finished with the frames of \(rest), which is left over: nothing to write "
                          + "(dualcam finish \(file) removes it)")
        }
        let removed = unlink(rest) == 0 ? "removed" : "not removed: \(String(cString: strerror(errno)))"
        printLine("\(file) is already finished with the frames of \(rest) (a stop came before it was removed): the leftover is \(removed)")
        return true
    }

    /// Whether the intermediate is finished alone (FILE holds none of the take) or joined to
    /// FILE, and how many frames are missing before it, by `TakeRecovery`'s rules; anything
    /// else is refused, nothing changed.
    private func joinsAlone(_ info: Intermediate, rest: String) throws -> (alone: Bool, missing: Int) {
        let empty = OutputPath.entry(file) == nil || Self.isEmptyTake(file)
        let take = TakeRecovery.Take(isEmpty: empty, takeID: Intermediate.takeID(of: file),
                                     isFragmented: !empty && (try? MovAtoms.isFragmented(file)) == true) { [file] in
            try MovFinalizer.videoPacketCount(file)
        }
        let elsewhere = "nothing was changed" + (output == nil ? " (dualcam finish \(file) -o NEW.mov makes its take from it alone)" : "")
        do {
            switch try TakeRecovery.join(take, Self.rest(info, at: rest), inPlace: output == nil) {
            case let .alone(missing): return (true, missing)
            case let .after(missing): return (false, missing)
            }
        } catch let refusal as TakeRecovery.Refusal {
            switch refusal {
            case .anotherTakesIntermediate:
                throw Failure("\(rest) is another take's intermediate than \(file) (which holds no picture yet): \(elsewhere)")
            case .wholeTakeOfAnother:
                throw Failure("\(rest) holds a whole take, and \(file) is not that take: \(elsewhere)")
            case .notThatTake:
                throw Failure("\(rest) continues a take at \(file) after its first \(info.fromFrame) frames, but \(file) is not "
                              + "that take: \(elsewhere)")
            case let .doNotFit(frames):
                throw Failure("\(rest) continues \(file) after its first \(info.fromFrame) frames, but \(file) holds \(frames): "
                              + "they do not fit together; nothing was changed")
            }
        }
    }

    /// The intermediate at `path` as `TakeRecovery` weighs it.
    private static func rest(_ info: Intermediate, at path: String) -> TakeRecovery.Rest {
        TakeRecovery.Rest(takeID: info.takeID, fromFrame: info.fromFrame) { try MovFinalizer.videoPacketCount(path) }
    }

    /// A file some program (dualcam's are refused by their lock first) still has open for
    /// writing is not finished: what it writes after this would be lost (a fragmented file
    /// another program was writing was finished in place and lost 4.5 s of its 8).
    static func refuseWhileWritten(_ path: String) throws {
        let writers = OpenWriters.of(path)
        guard writers.isEmpty else {
            throw Failure("\(path) is open for writing by \(TerminalLine.printable(OpenWriters.describe(writers))): finishing it now would "
                          + "lose what it writes next; nothing was changed (finish it when that program is done)")
        }
    }

    /// An intermediate a kill left before anything was written to it (0 bytes, or its header
    /// alone): it holds nothing, and is removed rather than refused as unreadable (finish and
    /// record pointed at each other, and only deleting it by hand got out). What FILE holds is
    /// then finished as if it had none. Asked with its lock held, no other writer on it.
    private func removedEmptyIntermediate(_ rest: String, size: Int64) throws -> Bool {
        let empty = size == 0 || (Self.isEmptyTake(rest) && (try? MovFinalizer.videoPacketCount(rest, limit: 1)) ?? 0 == 0)
        guard empty else { return false }
        guard unlink(rest) == 0 else { throw Failure("\(rest) holds nothing but cannot be removed: \(String(cString: strerror(errno)))") }
        printLine("\(rest) held no frame (the take was stopped as it began): it is removed")
        return true
    }

    /// What to run for an intermediate given as the take: each way works from where things
    /// stand (the take's file under its name, or renamed, or gone, or another take there).
    static func wayToFinish(_ intermediate: String, _ info: Intermediate) -> String {
        let named = Intermediate.take(of: intermediate) ?? intermediate
        if OutputPath.entry(named) != nil, Intermediate.takeID(of: named) == info.takeID || Self.isEmptyTake(named) {
            return "dualcam finish \(named) joins it to the take"
        }
        if let renamed = Intermediate.companions(of: info.takeID, besides: intermediate, intermediates: false).first {
            return "dualcam finish \(renamed) joins it to the take (renamed from \(PathName.last(named)))"
        }
        if OutputPath.entry(named) == nil { return "dualcam finish \(named) makes the take from it" }
        // A whole take is made alone beside whatever stands at its take's name; the rest of a
        // take that is not here only under a name of its own.
        if info.fromFrame == 0 { return "its take is not \(named): dualcam finish \(named) -o NEW.mov makes the take from it alone" }
        return "its take is not here (\(named) is not it): mv \(intermediate) NEW.mov\(Intermediate.suffix); "
            + "dualcam finish NEW.mov makes a take of what it holds"
    }

    /// How long a take's lock is waited for while its holder is dying: what a recording killed
    /// or stopped a moment ago takes to end. Its memory is given back by its last thread, an
    /// encoder's below normal priority: beside three busy loops a record stopped during the
    /// encoding after the stop took 1.9-6.2 s to end, and a finish run as it said so was
    /// refused at 2 s. A dying process always ends; only one stuck in the kernel outlasts this.
    static let lockPatience = 30.0

    /// A take's (or its intermediate's) lock, as `RecordingLock.hold` takes it, waiting for a dying holder.
    static func hold(_ path: String) throws -> Int32? {
        do {
            return try RecordingLock.hold(path, waitingForTheDying: lockPatience) { pid in
                say("waiting for the dualcam that held \(path) (pid \(pid)) to end")
            }
        } catch {
            // Said without "cannot write": finish only reads it (with -o) as often as it rewrites it.
            if case let .cannotWrite(_, reason) = error, reason == RecordingLock.heldReason {
                throw Failure("\(path) \(RecordingLock.heldReason)")
            }
            throw error
        }
    }

    /// A regular file holding no picture of a take yet (`TakeRecovery.isEmptyTake`).
    static func isEmptyTake(_ path: String) -> Bool {
        guard let st = OutputPath.entry(path), (st.st_mode & S_IFMT) == S_IFREG else { return false }
        let boxes = st.st_size == 0 ? [] : (try? MovAtoms.topLevel(path))?.map { (type: $0.type, size: $0.size) }
        return TakeRecovery.isEmptyTake(size: Int64(st.st_size), boxes: boxes)
    }

    /// A take recorded with --iso and killed: its cameras' own files are fragmented too.
    /// Returns those it finished.
    @discardableResult
    private func finishCameras() throws -> [String] {
        var finished: [String] = []
        // The take's identity: in its file, or (a take killed before its first fragment)
        // in its sidecar. Another take's camera files under these names are left alone.
        let identity = Intermediate.takeID(of: file) ?? Relayout.recorded(file)?.takeID
        for role in ["back", "front"] {
            let camera = IsoFiles.path(for: file, role: role)
            if OutputPath.entry(camera) != nil, (try? MovAtoms.isFragmented(camera)) == true {
                guard identity != nil, Intermediate.takeID(of: camera) == identity else {
                    say("\(camera) was written by another take than \(file): left as it is")
                    continue
                }
                try finish(camera, into: nil, overwrite: false)
                finished.append(camera)
            }
        }
        // The take renamed after the kill: its camera files kept the old name.
        let elsewhere = identity.map { IsoFiles.underAnOldName(of: file, takeID: $0) } ?? []
        for camera in elsewhere.map(\.file) where (try? MovAtoms.isFragmented(camera)) == true {
            try finish(camera, into: nil, overwrite: false)
            finished.append(camera)
        }
        if !elsewhere.isEmpty {
            say("\(elsewhere.map(\.file).joined(separator: " and ")) are this take's cameras' own files under its old name; "
                + "relayout finds them once renamed: \(IsoFiles.renaming(elsewhere, take: file))")
        }
        return finished
    }

    /// A take killed before its first fragment was written is an empty file: nothing in it
    /// to finish (its cameras' own files, with --iso, may hold what was recorded).
    private func finishEmptyTake(intermediateSeen: Bool) throws -> Never {
        if let held = try Self.hold(file) { close(held) }
        let cameras = output == nil ? try finishCameras() : []
        // A take whose frames all went to an intermediate that is not here looks the same.
        let away = !intermediateSeen && Intermediate.takeID(of: file) != nil && OutputPath.entry(Intermediate.path(for: file)) == nil
            ? "; if its frames went to its intermediate (\(PathName.last(Intermediate.path(for: file)))), that file is not beside it: "
                + "put it back and run dualcam finish \(file) again" : ""
        throw Failure("\(file) is empty: no frame was written to it, so there is nothing in it to finish" + away
                      + (cameras.isEmpty ? "" : " (its cameras' own files were finished: " + cameras.joined(separator: ", ") + ")"))
    }

    private func finish(_ file: String, into output: String?, overwrite: Bool) throws {
        guard try MovAtoms.isFragmented(file) else {
            guard try MovAtoms.isWholeMovie(file) else {
                throw Failure("\(file) is damaged: cut short (a box runs past the file's end, or it has no index), and "
                              + "it holds no fragments to finish from")
            }
            if output == nil {
                // Said as it is: another program's file may have its index at the end.
                let boxes = try MovAtoms.topLevel(file).map(\.type)
                let indexFirst = (boxes.firstIndex(of: "moov") ?? .max) < (boxes.firstIndex(of: "mdat") ?? .max)
                printLine("\(file) is already a finished movie (a regular file, index " + (indexFirst ? "first" : "at the end")
                          + "): nothing to do")
                return
            }
            throw Failure("\(file): not a fragmented recording (nothing to finish); copy it instead")
        }
        let destination = output ?? file
        // A live recording's file is not taken from under it: it finishes it itself.
        let held = try Self.hold(file)
        defer { if let held { close(held) } }
        try Self.refuseWhileWritten(file)
        // In place only what dualcam recorded: another program's file is rewritten to a copy,
        // never under its own name, where that program or its user may not expect it.
        if output == nil && Intermediate.takeID(of: file) == nil {
            throw Failure("\(file) was not recorded by dualcam (it carries no take's identity): it is finished only into a copy, "
                          + "dualcam finish \(file) -o NEW.mov; nothing was changed")
        }
        if destination != file { try OutputPath.check(destination, overwrite: overwrite, inputs: [file]) }
        let r = try MovFinalizer.finalize(file, into: destination, overwrite: overwrite, holding: held)
        printLine(String(format: "finished %@: %d frames (%.2f s), %d audio packets%@", destination, r.videoFrames,
                     r.videoSeconds, r.audioPackets,
                     r.incompleteSamples > 0 ? ", \(r.incompleteSamples) samples of a fragment cut short at the end left out" : ""))
    }
}
