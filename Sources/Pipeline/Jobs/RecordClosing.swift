import Foundation
import MediaIO

/// The end of a recording: sources and sound stopped, the file left in the best state there
/// is, each output finished, the summary.
extension Recorder {
    func finish(_ loop: RecordLoop, _ opened: Opened) throws(RecordError) -> RecordSummary {
        for name in opened.sources.stopAll() {
            event(String(format: "%@: its capture thread did not stop within %.0f s (stuck in a read that does not return); the file is "
                         + "finished without it", name, SourceFeed.stopTimeout))
        }
        let clock = loop.timeline.clock
        stopAudio(opened.audio, end: clock.origin.map { $0 + clock.seconds })
        observer.willFinish()
        let stoppedAt = monotonicNow()
        let lastSlot = clock.next > 0 ? clock.next - 1 : nil
        let closed = Result { () throws(RecordError) -> Int? in
            if let file = opened.encoding.file {
                return try close(file, keeping: opened.encoding.keeping, queue: loop.queue, timeline: loop.timeline)
            }
            try close(loop.queue, sink: opened.encoding.sink, timeline: loop.timeline)
            return nil
        }
        // Once the file is whole: what the stream still holds goes out after it. A take of
        // which nothing reached the disk leaves nothing beside it either (an --iso sidecar
        // stayed behind for one).
        var nothingKept = false
        if case .failure(.nothingRecorded) = closed { nothingKept = true }
        let reports = opened.outputs.map { $0.finish(lastSlot: nothingKept ? nil : lastSlot) }
        let joinedAfterStop = try closed.get()
        var result = summary(loop, opened)
        if loop.queue.lastSlotRefilled { result.encoderSkippedFrames -= 1 }
        result.encode = plan.file == nil ? EncodeMode.live.rawValue : plan.encode.rawValue
        if let keeping = opened.encoding.keeping, let from = keeping.switchedAt {
            let caught = keeping.caughtUp
            let reached = caught.map { $0.frames > 0 ? Int($0.lastSlot) + 1 : from } ?? from
            // What the join encoded, counted as it went: slots skipped while even the
            // intermediate was behind are in neither file (counting slots said 180 where the
            // file held 120).
            result.framesEncodedAfterStop = joinedAfterStop ?? max(0, clock.next - max(from, reached))
            result.framesEncodedDuringTake = caught?.frames ?? 0
            result.intermediateFromFrame = from
            if let why = caught?.endedEarly { event("the encoding of the intermediate during the take ended early: \(why)") }
        }
        result.finishingSeconds = monotonicNow() - stoppedAt
        // The file is whole: the catch-up's thread ends once the frames its encoder held are
        // done (at the encoders' level), rather than run on into the process's exit.
        opened.encoding.keeping?.catchUpEnded(timeout: 10)
        for report in reports { report.contribute(&result) }
        return result
    }

    /// Lets the audio catch up with the last frame (it arrives in 10 ms periods), then stops it.
    private func stopAudio(_ live: (any SoundSource)?, end: Double?) {
        guard let live else { return }
        if let end {
            let deadline = monotonicNow() + 0.5
            while live.capturedUntil < end && !live.isLost && monotonicNow() < deadline { usleep(5_000) }
        }
        if !live.stop() {
            event(String(format: "audio: the capture thread did not stop within %.0f s (stuck in the sound driver); the "
                         + "file is finished without it", LiveAudio.stopTimeout))
        }
        if live.overruns > 0 { event("audio: \(live.overruns) overrun(s), gaps filled with silence") }
    }

    /// Why a recording has no frame: what the user did (a stop, a pause from the start)
    /// before blaming the camera.
    private func nothingRecorded(_ timeline: Timeline) -> RecordError {
        if timeline.clock.origin != nil { return .nothingRecorded("stopped before the first frame") }
        if timeline.pause.isPaused { return .nothingRecorded("paused before the first picture and not resumed") }
        if timeline.stoppedAt != nil { return .nothingRecorded("stopped before the first picture came") }
        return .nothingRecorded("no picture came from \(plan.back ?? "the back camera")")
    }

    /// With no file (`-o none`): what is queued is let go, or encoded for the stream and the
    /// encoders' last frames handed to it.
    private func close(_ queue: EncodeQueue, sink: any Sink, timeline: Timeline) throws(RecordError) {
        let clock = timeline.clock
        do {
            try queue.finish(lastSlot: clock.next > 0 ? clock.next - 1 : nil)
            try sink.finishWriting()
        } catch { throw .media(error) }
        if queue.encodedFrames == 0 { throw nothingRecorded(timeline) }
    }

    /// Encodes what is queued and leaves OUT in the best state there is: regular after a
    /// clean stop; fragmented (playable) when something failed; absent when empty. Returns
    /// how many pictures of the intermediate were encoded after the stop (nil: none was joined).
    private func close(_ file: RecordingFile, keeping: KeepingSink?, queue: EncodeQueue, timeline: Timeline) throws(RecordError) -> Int? {
        let clock = timeline.clock
        let failure: MediaError?
        do { try queue.finish(lastSlot: clock.next > 0 ? clock.next - 1 : nil); failure = nil } catch { failure = error }
        let seconds = Double(queue.encodedFrames) / Double(clock.fps)
        if queue.encodedFrames == 0 {
            keeping?.abandon()
            keeping?.intermediate?.remove()
            file.remove()
            if let failure { throw .media(failure) }
            throw nothingRecorded(timeline)
        }
        if let failure {
            // A stuck encoder thread may still be inside the muxer: the file is left to it,
            // as it stands on disk (every complete fragment plays).
            if !queue.isStuck { keeping?.abandon() }
            guard let kept = queue.isStuck ? file.path : keptAsItIs(file, keeping: keeping) else {
                throw .nothingRecorded(failure.description)
            }
            throw .cutShort(path: kept, seconds: seconds, reason: failure.description + restNote(keeping, joinedBy: kept))
        }
        do throws(MediaError) {
            if let keeping { try keeping.finishWriting() } else { try file.finishWriting() }
        } catch {
            keeping?.abandon()
            guard let kept = keptAsItIs(file, keeping: keeping) else { throw .nothingRecorded(error.description) }
            throw .notFinalized(path: kept, seconds: seconds, reason: error.description + restNote(keeping, joinedBy: kept))
        }
        guard file.isAtItsName else { throw lostName(file, keeping: keeping, seconds: seconds) }
        let rest = keeping?.intermediate
        if let rest, !rest.isAtItsName {
            let at = Double(rest.info.fromFrame) / Double(clock.fps)
            // What the encoder reached of it during the take is in the file, without its sound.
            let held = keeping?.caughtUp.flatMap { $0.frames > 0 ? Double($0.lastSlot + 1) / Double(clock.fps) : nil }
            let holds = held.map { String(format: "the file holds %.1f s of picture, its sound only the %.1f s before it", $0, at) }
                ?? String(format: "the file holds the %.1f s before it", at)
            throw .notFinalized(path: file.keepAsItIs(), seconds: seconds, reason: String(
                format: "%@, which held the take from %.1f s on, was moved or removed while recording; %@", rest.path, at, holds))
        }
        let started = monotonicNow()
        let encoded = Locked(0)
        do throws(MediaError) {
            _ = try file.finalize(rest: rest) { [observer] done, total in
                encoded.withLock { $0 = max($0, done) }
                observer.encodingAfterStop(done: done, total: total, seconds: monotonicNow() - started)
            }
            return rest == nil ? nil : encoded.withLock { $0 }
        } catch {
            let kept = file.keepAsItIs()
            throw .notFinalized(path: kept, seconds: seconds, reason: error.description + restNote(keeping, joinedBy: kept))
        }
    }

    /// Where a take cut short is kept; nil where no picture of it reached the disk (it filled
    /// first) and no intermediate holds it: nothing is left then, not a file that does not play.
    private func keptAsItIs(_ file: RecordingFile, keeping: KeepingSink?) -> String? {
        if keeping?.intermediate?.isAtItsName != true, file.removeIfItHoldsNoPicture() { return nil }
        return file.keepAsItIs()
    }

    /// Where the rest of a take that went on in an intermediate is, for a line about a take
    /// left unfinished at `kept`.
    private func restNote(_ keeping: KeepingSink?, joinedBy kept: String) -> String {
        guard let rest = keeping?.intermediate, rest.isAtItsName else { return "" }
        return String(format: "; the take from %.1f s on is in %@, which dualcam finish %@ joins to it",
                      Double(rest.info.fromFrame) / plan.framesPerSecond, rest.path, kept)
    }

    /// The take's name was taken from it while recording (moved, removed, replaced): what was
    /// kept, and where. A rescued take takes its intermediate along, named for it.
    private func lostName(_ file: RecordingFile, keeping: KeepingSink?, seconds: Double) -> RecordError {
        guard let rescued = file.rescueIfLost() else {
            if !file.hasAName {
                return .media(.cannotWrite(path: file.path, reason: String(format: "it was removed while recording (its folder "
                    + "too, or every place to copy it to refused): the %.1f s recorded are lost", seconds)))
            }
            return .media(.cannotWrite(path: file.path, reason: String(format: "it was moved or replaced while recording; the %.1f s "
                + "recorded were left as they are, a fragmented file, wherever it was moved", seconds) + restNote(keeping, joinedBy: file.path)))
        }
        var kept = "kept, a fragmented file, at \(rescued) (dualcam finish \(rescued) makes it regular)"
        if let rest = keeping?.intermediate, rest.isAtItsName {
            let beside = Intermediate.path(for: rescued)
            kept = OwnFile.move(rest.path, toFree: beside)
                ? "kept, a fragmented file, at \(rescued), the rest in \(beside) (dualcam finish \(rescued) joins them)"
                : kept + restNote(keeping, joinedBy: rescued)
        }
        return .media(.cannotWrite(path: file.path, reason: String(format: "it was moved or replaced while recording; the %.1f s "
            + "recorded were %@", seconds, kept)))
    }

    private func summary(_ loop: RecordLoop, _ opened: Opened) -> RecordSummary {
        let counts = loop.counts, clock = loop.timeline.clock, sources = opened.sources.all, audio = opened.audio
        let sorted = counts.latencies.sorted()
        func pct(_ q: Double) -> Double { sorted.nearestRank(q) * 1000 }
        let cameras = sources.compactMap { $0 as? CameraSource }.map(\.counts)
        // From when the first slot was due to half a frame after the last one.
        let taken = clock.firstOrigin.map { ($0, clock.origin! + clock.seconds - 0.5 * clock.frames.period) }
        let cameraDamaged = cameras.reduce(0) { $0 + $1.damaged }
            + sources.compactMap { source in taken.flatMap { (source as? FileSource)?.damagedJPEGs(dueFrom: $0.0, to: $0.1) } }
                .reduce(0, +)
        let cameraDrops = cameras.reduce(0) { $0 + $1.sequenceGaps } + cameraDamaged
        return RecordSummary(output: plan.shownName, frames: clock.next, seconds: clock.seconds,
                             singleCamera: sources.count == 1, sources: sources.map { "\($0.name): \($0.format)" },
                             latencyP50Ms: pct(0.5), latencyP99Ms: pct(0.99), latencyMaxMs: sorted.last.map { $0 * 1000 } ?? 0,
                             repeatedFrames: counts.repeated, droppedBackFrames: counts.droppedBack,
                             cameraDroppedFrames: cameraDrops, cameraDamagedFrames: cameraDamaged,
                             cameraReopened: cameras.reduce(0) { $0 + $1.reopened },
                             cameraUntrustedStamps: cameras.reduce(0) { $0 + $1.untrustedStamps },
                             composedInPlace: counts.composedInPlace,
                             encoderSkippedFrames: counts.encoderSkipped,
                             audioDriftCorrection: audio?.driftCorrection ?? 0,
                             audioSilenceInserted: audio?.silenceInserted ?? 0, events: eventsSoFar,
                             virtualCamera: nil, stream: nil, isoFiles: nil,
                             pauses: loop.timeline.pause.count,
                             pausedSeconds: loop.timeline.pausedSeconds(now: self.clock.now()),
                             // Started swapped (--swap): a swap at 0, as compose's --swap-at 0 and relayout read it.
                             swaps: (plan.swap && loop.swapTimes.first != 0 ? [0] : []) + loop.swapTimes,
                             firstFrameSeconds: clock.firstOrigin.flatMap { origin in
                                 secondsSinceProcessStart().map { $0 - (self.clock.now() - origin) }
                             })
    }
}
