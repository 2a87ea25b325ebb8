import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// The take's frames from the slot its encoder fell behind at: H.264 ultrafast at a high
/// quality (see `Intermediate`), and the take's sound from where its file stops, in a
/// fragmented file beside the take, locked while recorded (`dualcam finish` leaves it alone).
final class IntermediateFile {
    let path: String
    let info: Intermediate
    let encoders: OutputEncoders
    let writer: MovWriter
    private let lockFD: Int32

    /// `threads`: the intermediate's encoder's (`StagePlan.intermediateThreads`).
    init(take: String, takeID: String, from slot: Int, takeSettings: VideoEncoderSettings, audio: AudioEncoder,
         metadata: MovWriter.Metadata, threads: Int) throws(MediaError) {
        path = Intermediate.path(for: take)
        info = Intermediate(fromFrame: slot, settings: takeSettings, takeID: takeID)
        let video = try VideoEncoder(settings: Intermediate.encoding(for: takeSettings, threads: threads))
        encoders = OutputEncoders(video: video, audio: audio)
        do { lockFD = try RecordingFile.create(path) } catch {
            throw error.rawValue == EEXIST ? Self.leftOver(path, take: take) : .system(path: path, writing: true, errno: error)
        }
        var tagged = metadata
        tagged.comment = info.tag
        do {
            writer = try MovWriter(path: path, descriptor: lockFD, encoders: encoders, metadata: tagged,
                                   layout: .fragmented(seconds: RecordingFile.fragmentSeconds))
        } catch {
            unlink(path)
            close(lockFD)
            throw error
        }
    }

    deinit { close(lockFD) }

    /// An intermediate of an earlier take is there: it holds that take's end.
    static func leftOver(_ path: String, take: String) -> MediaError {
        if let st = OutputPath.entry(path), (st.st_mode & S_IFMT) != S_IFREG {
            return .outputUnusable("\(path) is in the way (it is not a regular file): a take of \(take) may need that name "
                                   + "for its intermediate; move it to record")
        }
        return .outputUnusable("\(path) is there already: the end of an earlier take of \(take), not yet encoded (dualcam "
                               + "finish \(take) completes it; remove it to record anyway)")
    }

    /// Pictures given to it so far.
    private(set) var picturesWritten = 0

    func write(frame: EncoderFrame, index: Int64) throws(MediaError) {
        try encoders.encode(frame, index: index, into: writer)
        picturesWritten += 1
    }
    func write(sound: SampleQueue, final: Bool) throws(MediaError) { try encoders.encode(from: sound, final: final, into: writer) }

    func finishWriting() throws(MediaError) {
        try encoders.drain(into: writer)
        try writer.finish()
    }

    func abandon() { writer.abandon() }

    /// Whether `path` (not followed if a link) is still the file written.
    var isAtItsName: Bool { OutputPath.isFile(lockFD, at: path) }

    /// Once joined to the take: removed, if it is still the file written.
    func remove() {
        guard isAtItsName else { return }
        unlink(path)
        DurableFile.syncFolder(of: path)
    }
}
