import Compositor
import Foundation
import MediaIO

/// `record --iso`: each camera's own picture kept in a file of its own beside the take
/// (TAKE.back.mov, TAKE.front.mov: H.264, the camera's size, a silent sound track), frame
/// for frame on the take's own slots: frame n of each is the picture that camera gave slot
/// n of the take (a camera whose first picture came late holds it from the start). So
/// `dualcam relayout` composes them again, in another layout or with other swaps, in step
/// with the take's sound. The swaps made while recording go in TAKE.dualcam.json.
final class IsoRecording {
    /// Touched by the recording's thread, or by the thread that ends it early for the disk's
    /// room, which the recording's thread joins before touching it again.
    final class Track: @unchecked Sendable {
        let role: String
        let path: String
        var file: RecordingFile?
        var queue: EncodeQueue?
        var scaler: PictureScaler?
        var lastTimestamp = -Double.infinity
        var failure: String?
        /// Pictures of its camera left out while its encoder was behind.
        var leftOut = 0
        /// Bytes a second its file usually takes (`usualBitsPerPixel`), once opened.
        var usualBytesPerSecond = 0.0
        /// Set once its file was ended before the take (the disk's room): how that went.
        var endedEarly: MediaError??
        init(role: String, path: String) { self.role = role; self.path = path }

        /// Encodes what is queued, the picture before `lastSlot` held to it, and writes the
        /// file's last fragment and its trailer: the file is whole as a fragmented one.
        func endWriting(lastSlot: Int) throws(MediaError) {
            guard let queue, let file else { return }
            try queue.finish(lastSlot: lastSlot)
            try file.finishWriting()
        }
    }

    private let settings: OutputSettings
    /// The take's file.
    private let take: String
    private let log: (String) -> Void
    /// By source, in the order opened: the back camera's first.
    private var tracks: [(source: ObjectIdentifier, track: Track)] = []
    /// Swap times (seconds of the take) for the sidecar: when the take's roles changed.
    private(set) var swaps: [Double] = []
    /// Whether the take's first slot showed the front camera full frame, and the last slot's.
    private var startsSwapped: Bool?
    private var swapped = false
    /// The sidecar this take wrote last (device and inode), and what stood at its name when
    /// the take began (replaced only with --overwrite, checked then).
    private var sidecarWritten: (UInt64, UInt64)?
    private var sidecarFoundAtStart: (UInt64, UInt64)?
    /// Something not ours took the sidecar's name while recording: it is left alone.
    private var sidecarGivenUp = false
    /// The slot at which the cameras' files stopped for the take's room on the disk.
    private(set) var stoppedForSpace: Int?
    private var nextSpaceCheck = 0
    /// Ends the cameras' files when they stop for the take's room, while the disk has it
    /// (left to the take's end, their last fragments found it full: 0.5 s of 0.8 were kept).
    private var endingForSpace: OwnedThread?

    static func path(for output: String, role: String) -> String { IsoFiles.path(for: output, role: role) }
    static func sidecar(for output: String) -> String { IsoFiles.sidecar(for: output) }

    /// Checks the files it would write before anything is recorded: none may be an input
    /// (a camera file played as a camera), and none may exist unless `overwrite`.
    static func check(output: String, overwrite: Bool, inputs: [String]) throws(MediaError) {
        for p in [path(for: output, role: "back"), path(for: output, role: "front"), sidecar(for: output)] {
            try OutputPath.refuseInputs(p, inputs: inputs)
            if !overwrite && OutputPath.entry(p) != nil { throw .outputExists(path: p) }
        }
    }

    init(settings: OutputSettings, sources: [any FrameSource], log: @escaping (String) -> Void) {
        self.settings = settings
        take = settings.take ?? ""
        self.log = log
        sidecarFoundAtStart = OutputPath.entry(Self.sidecar(for: take)).map { (UInt64($0.st_dev), UInt64($0.st_ino)) }
        for (i, s) in sources.enumerated() {
            let role = i == 0 ? "back" : "front"
            tracks.append((ObjectIdentifier(s), Track(role: role, path: Self.path(for: take, role: role))))
        }
    }

    /// The roles slot `slot` showed: a change is a swap, at the slot where it showed.
    func noteRoles(swapped now: Bool, slot: Int, fps: Int) {
        if startsSwapped == nil { (startsSwapped, swapped) = (now, now) }
        if now != swapped {
            swaps.append(Double(slot) / Double(fps))
            // Written at each swap too, so a take that is killed keeps them for relayout.
            writeSidecar(files: tracks.filter { $0.track.queue != nil }.map(\.track.path))
        }
        swapped = now
    }

    /// Slot `slot` of the take shows `picture` of `source`: kept in its track when new.
    func write(_ picture: LiveFrame, of source: any FrameSource, slot: Int) {
        guard let track = tracks.first(where: { $0.source == ObjectIdentifier(source) })?.track, track.failure == nil,
              picture.timestamp != track.lastTimestamp else { return }
        if track.queue == nil { open(track, size: picture.buffer.size) }
        guard let queue = track.queue, let scaler = track.scaler else { return }
        // The first picture stands for every slot before it, so each file starts with the take.
        let index = track.lastTimestamp == -.infinity ? 0 : slot
        guard case let .canvas(canvas) = queue.acquire() else {  // its encoder behind: the last picture holds
            track.leftOut += 1
            return
        }
        scaler.place(picture.picture, in: scaler.fullRect, of: canvas.view)
        queue.submit(index: index, canvas: canvas)
        track.lastTimestamp = picture.timestamp
    }

    private func open(_ track: Track, size: Size) {
        var video = settings.video
        video.codec = .h264
        video.preset = "ultrafast"
        video.crf = 18
        video.bitrate = nil
        video.size = Size(width: size.width & ~1, height: size.height & ~1)
        do throws(MediaError) {
            let file = try RecordingFile(path: track.path, overwrite: settings.overwrite, video: video, metadata: settings.metadata,
                                         companion: true)
            track.file = file
            track.queue = try EncodeQueue(sink: file, canvas: video.size, depth: Self.queueDepth, fps: Int(video.framesPerSecond), companion: true)
            track.scaler = PictureScaler(canvas: video.size)
            track.usualBytesPerSecond = Double(video.size.width * video.size.height) * Double(video.framesPerSecond) * Self.usualBitsPerPixel / 8
        } catch {
            track.failure = error.description
            track.file?.remove()
            log("--iso: \(track.path) cannot be written (\(error)): the take goes on without it")
        }
    }

    /// Ends every track at the take's last slot and finishes its file; returns the files
    /// written. What fails is said and left as it is (a fragmented file plays).
    func finishTracks(lastSlot: Int) -> [String] {
        var written: [String] = []
        endingForSpace?.join()
        for (_, track) in tracks {
            guard let queue = track.queue, let file = track.file, track.failure == nil else { continue }
            do throws(MediaError) {
                switch track.endedEarly {
                case nil: try track.endWriting(lastSlot: lastSlot)
                case let .some(failure?): throw failure
                case .some(nil): break
                }
                _ = try file.finalize()
                written.append(track.path)
                if track.leftOut > 0 {
                    log("--iso: \(track.path) left out \(track.leftOut) of its camera's pictures while its encoder was behind (it runs "
                        + "below the take's, which kept every frame); each picture it holds lasts until the next")
                }
            } catch {
                // Kept fragmented, it plays and relayout reads it: listed with the others.
                let kept = !queue.isStuck && file.keepAsItIs() == track.path
                if kept { written.append(track.path) }
                // Said only of a file that is there (one removed mid-take was said to be kept).
                log("--iso: \(track.path) could not be finished (\(error)); " + (kept
                    ? "it is kept as it is, a fragmented file (dualcam finish \(take) makes it a regular one)"
                    : "it is not kept"))
            }
        }
        // Stopped for the take's room, the sidecar was written then, and a swap after it
        // concerns no picture of theirs.
        if stoppedForSpace == nil, !written.isEmpty { writeSidecar(files: written) }
        return written
    }

    /// The take comes first: when the disk's free space falls to what the take needs to be
    /// finished (a copy as large as it) and to go on for a while, the cameras' files stop
    /// there (they ran the disk full, and the take stopped at 5.7 s of 10 with 25 holes).
    private func leaveRoomForTheTake(slot: Int, fps: Int) {
        // Every slot (a statvfs and a few fstats): a camera's file of noisy 720p took 19 MB/s,
        // and looked at five times a second, the cameras had written 11.5 MB of a 24 MB disk
        // when they stopped, more than the take could spare.
        nextSpaceCheck = slot + 1
        guard stoppedForSpace == nil, let free = RecordingFile.freeBytes(near: take) else { return }
        let seconds = Double(slot) / Double(max(fps, 1))
        // The take's rate as written so far where that is more than the estimate (a noisy
        // picture took 0.87 MB/s at 640x360 where 0.11 was expected), its intermediate too.
        // A file grows a fragment at a time: what is on disk may be up to one short of now.
        func written(_ paths: [String]) -> Double { paths.compactMap { OutputPath.entry($0).map { Double($0.st_size) } }.reduce(0, +) }
        let measured = seconds >= 0.5
        let onDisk = max(seconds - RecordingFile.fragmentSeconds, 0.5)
        // Before the take's own file says, its cameras' encoders do: pictures that take them
        // 14 times the usual bytes (noise: 19 MB/s for 720p) take the take's encoder more too.
        let files = tracks.compactMap(\.track.file)
        let interval = 1 / Double(max(fps, 1))
        let cameraRate = Double(files.map(\.bytesHandedOver).reduce(0, +)) / max(seconds, interval)
        let usualCameraRate = tracks.compactMap { $0.track.file == nil ? nil : $0.track.usualBytesPerSecond }.reduce(0, +)
        let hardness = usualCameraRate > 0 ? max(cameraRate / usualCameraRate, 1) : 1
        let rate = max(Recorder.expectedBytesPerSecond(settings.video) * hardness,
                       measured ? written([take, Intermediate.path(for: take)]) / onDisk : 0)
        let reserve = rate * (2 * seconds + Self.reserveSeconds) + Self.reserveBytes
        // What the cameras' files will still write if they stop at the next look but one: what
        // their muxers hold (a fragment of noisy 720p is 10 MB, written at once; uncounted, the
        // disk filled on a slow machine) and what their encoders' queues and that time bring.
        let ahead = Double(files.map(\.bytesNotYetWritten).reduce(0, +))
            + cameraRate * (2 * interval + Double(Self.queueDepth) / Double(max(fps, 1)))
        guard Double(free) - ahead < reserve else { return }
        stoppedForSpace = slot
        let started = tracks.filter { $0.track.queue != nil }.map(\.track.path)
        if !started.isEmpty { writeSidecar(files: started) }
        let ending = tracks.map(\.track).filter { $0.queue != nil && $0.failure == nil }
        endingForSpace = OwnedThread(name: "dualcam-iso-end") {
            for track in ending {
                do throws(MediaError) { try track.endWriting(lastSlot: slot); track.endedEarly = .some(nil) } catch {
                    track.endedEarly = .some(error)
                }
            }
        }
        log(String(format: "--iso: at %.1f s %.0f MB are free, what the take needs to go on and be finished: the cameras' own files "
                   + "stop here, the take goes on", seconds, Double(free) / 1e6))
    }

    /// Pictures each camera's encoder may have waiting.
    static let queueDepth = 6

    /// The room kept for the take beyond its finishing copy: seconds of it, and bytes.
    static let reserveSeconds = 10.0
    static let reserveBytes = 8.0e6

    /// Nothing was recorded: no camera file is left either.
    func remove() {
        endingForSpace?.join()
        for (_, track) in tracks { track.file?.remove() }
        removeSidecar()
    }

    /// The sidecar this take wrote, where nothing is left for it to describe (it stayed
    /// behind a take of which nothing reached a full disk).
    private func removeSidecar() {
        let path = Self.sidecar(for: take)
        guard let written = sidecarWritten, let there = OutputPath.entry(path),
              (UInt64(there.st_dev), UInt64(there.st_ino)) == written else { return }
        unlink(path)
        sidecarWritten = nil
    }

    private func writeSidecar(files: [String]) {
        let sidecar = IsoSidecar(
            take: PathName.last(take),
            cameras: Dictionary(uniqueKeysWithValues: tracks.filter { files.contains($0.track.path) }
                .map { ($0.track.role, PathName.last($0.track.path)) }),
            swaps: swaps.map { ($0 * 1000).rounded() / 1000 },
            startsSwapped: startsSwapped ?? false,
            takeID: settings.takeID,
            stoppedAt: stoppedForSpace.map { (Double($0) / Double(settings.video.framesPerSecond) * 1000).rounded() / 1000 })
        guard !sidecarGivenUp, let data = try? IsoSidecar.encoder.encode(sidecar) else { return }
        let path = Self.sidecar(for: take)
        // Written beside it under a name of this process's own, never following a link, then
        // moved over the sidecar only when what stands there is this take's (or was there at
        // the start, with --overwrite): a file someone made there meanwhile is not replaced.
        let temporary = PathName.join(PathName.folder(of: path), ".dualcam-sidecar-\(getpid())-\(take.hashValue).tmp")
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return log("--iso: \(path) could not be written: relayout will not know the swaps") }
        let wrote = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == data.count
        var st = stat()
        let ours = fstat(fd, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
        close(fd)
        let there = OutputPath.entry(path).map { (UInt64($0.st_dev), UInt64($0.st_ino)) }
        let replaceable = there.map { found in [sidecarWritten, sidecarFoundAtStart].contains { $0.map { $0 == found } ?? false } } ?? true
        guard wrote, replaceable else {
            unlink(temporary)
            if wrote {
                sidecarGivenUp = true
                return log("--iso: \(path) was made by something else while recording: it is left as it is, and relayout "
                           + "will not know the swaps")
            }
            return log("--iso: \(path) could not be written: relayout will not know the swaps")
        }
        let moved = there == nil ? OwnFile.move(temporary, toFree: path) : rename(temporary, path) == 0
        guard moved else {
            unlink(temporary)
            return log("--iso: \(path) could not be written: relayout will not know the swaps")
        }
        sidecarWritten = ours
    }
}

/// Where `record --iso` puts a take's cameras' own files, for `relayout` to find them.
public enum IsoFiles {
    /// TAKE for TAKE.mov (or TAKE with no extension).
    static func stem(of output: String) -> String {
        PathName.pathExtension(output).lowercased() == "mov" ? PathName.deletingExtension(output) : output
    }

    /// TAKE.ROLE.mov: a camera's own file ("back", "front").
    public static func path(for output: String, role: String) -> String { stem(of: output) + ".\(role).mov" }

    /// TAKE.dualcam.json: which files, and the swaps.
    public static func sidecar(for output: String) -> String { stem(of: output) + ".dualcam.json" }

    /// The camera files beside `take` that carry its identity under another take's name (the
    /// take renamed after a kill: its camera files keep the old name), with the names they
    /// would have beside it as it is now called.
    public static func underAnOldName(of take: String, takeID: String) -> [(file: String, wanted: String)] {
        ["back", "front"].flatMap { role -> [(file: String, wanted: String)] in
            let wanted = path(for: take, role: role)
            guard OutputPath.entry(wanted) == nil else { return [] }
            return Intermediate.companions(of: takeID, besides: take, intermediates: false)
                .filter { $0.hasSuffix(".\(role).mov") }.prefix(1).map { ($0, wanted) }
        }
    }

    /// "mv OLD NEW; ..." for `moves`, with the old name's sidecar when the take has none.
    public static func renaming(_ moves: [(file: String, wanted: String)], take: String) -> String {
        var all = moves
        if let first = moves.first, let role = ["back", "front"].first(where: { first.file.hasSuffix(".\($0).mov") }) {
            let old = String(first.file.dropLast(".\(role).mov".count)) + ".dualcam.json"
            if OutputPath.entry(old) != nil, OutputPath.entry(sidecar(for: take)) == nil { all.append((old, sidecar(for: take))) }
        }
        return all.map { "mv \($0.file) \($0.wanted)" }.joined(separator: "; ")
    }
}

extension OutputRequest {
    /// `--iso`: each camera's own picture kept beside the take, and the swaps. Whole
    /// pictures, whatever the role: the files are composed again later, in any layout.
    package static var iso: OutputRequest {
        OutputRequest(check: { settings, _ throws(MediaError) in
            guard let file = settings.take else {
                throw .outputUnusable("--iso keeps each camera's picture beside the take: with -o none there is no take")
            }
            try IsoRecording.check(output: file, overwrite: settings.overwrite, inputs: settings.inputs)
        }, needsWholePictures: true) { context in
            IsoRecording(settings: context.settings, sources: context.sources, log: context.event)
        }
    }
}

extension IsoRecording: LiveOutput {
    var takesSourcePictures: Bool { true }

    /// Before the inset may be drawn into the main picture's buffer.
    func take(_ slot: SlotPictures) {
        noteRoles(swapped: slot.swapped, slot: slot.slot, fps: slot.fps)
        if slot.slot >= nextSpaceCheck { leaveRoomForTheTake(slot: slot.slot, fps: slot.fps) }
        guard stoppedForSpace == nil else { return }
        for (source, frame) in slot.pictures { write(frame, of: source, slot: slot.slot) }
    }

    /// The cameras' size taken as the output's.
    var diskBytesPerSecond: Double {
        Double(tracks.count) * Double(settings.canvas.width * settings.canvas.height) * Double(settings.video.framesPerSecond)
            * Self.usualBitsPerPixel / 8
    }

    /// H.264 ultrafast at crf 18 takes 0.26-0.58 bits per pixel of test footage (measured).
    static let usualBitsPerPixel = 0.4

    func finish(lastSlot: Int?) -> OutputReport {
        guard let lastSlot else {
            remove()
            return .nothing
        }
        let cameras = finishTracks(lastSlot: lastSlot)
        // With no camera's file (none got a picture before the disk's room ran out), no
        // sidecar either: it was listed as the cameras' only file.
        if cameras.isEmpty { removeSidecar() }
        let files = cameras.isEmpty ? [] : cameras + [Self.sidecar(for: take)]
        return OutputReport { $0.isoFiles = files }
    }
}
