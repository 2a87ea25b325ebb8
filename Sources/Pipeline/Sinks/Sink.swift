import MediaIO

/// Where the engine's output goes: output frames in order, the sound that goes with them,
/// then an end, handed over by the `EncodeQueue` on its own thread: `compose`'s go to a
/// `FaststartFile`, `record`'s to a `RecordingFile`, or with no file (`-o none`) to a
/// `DiscardingSink`. A live stream
/// (`LiveStream`) is no second sink: it shares the file's encoding, taking each packet the
/// encoders hand the muxer (`OutputEncoders.subscribe`), so nothing is encoded twice. What shows
/// the pictures live (`VirtualCamera`; the preview window, a `PictureObserver` of another
/// module, through `OutputRequest.preview`) is a `LiveOutput` instead: it is given each
/// picture as it is composed, and must not wait for an encoder that may be behind real time.
package protocol Sink: AnyObject {
    /// Writes output frame `index` (encoded, when the sink encodes). The frame is only read.
    func write(frame: EncoderFrame, index: Int64) throws(MediaError)
    /// Writes the sound queued: whole encoder frames of it, and the rest too when `final`.
    func write(sound: SampleQueue, final: Bool) throws(MediaError)
    /// Samples of sound written so far: the engine ends the sound where the picture ends.
    var soundSamplesWritten: Int64 { get }
    /// No more frames or sound: what is buffered is written and the output closed.
    func finishWriting() throws(MediaError)
}

/// The two files we write encode the same way: frames and sound through `encoders` into
/// `writer`; they differ in where the file is and what happens once it is complete.
protocol EncodedMovSink: Sink {
    var encoders: OutputEncoders { get }
    var writer: MovWriter { get }
}

extension EncodedMovSink {
    func write(frame: EncoderFrame, index: Int64) throws(MediaError) { try encoders.encode(frame, index: index, into: writer) }
    func write(sound: SampleQueue, final: Bool) throws(MediaError) { try encoders.encode(from: sound, final: final, into: writer) }
    var soundSamplesWritten: Int64 { encoders.soundSamplesSent }

    /// The encoders' last frames, then the file's index or last fragment.
    func writeTheRestAndTrailer() throws(MediaError) {
        try encoders.drain(into: writer)
        try writer.finish()
    }
}

/// `record -o none`: frames and sound are let go as they come (the pictures are shown by
/// the virtual camera or the preview); the recording's clock and counts run as ever.
final class DiscardingSink: Sink {
    private(set) var soundSamplesWritten: Int64 = 0
    func write(frame: EncoderFrame, index: Int64) throws(MediaError) {}
    func write(sound: SampleQueue, final: Bool) throws(MediaError) {
        soundSamplesWritten += Int64(sound.count)
        sound.drop(sound.count)
    }
    func finishWriting() throws(MediaError) {}
}

/// `record -o none --stream URL`: the recording encoded for the stream alone, no file. The
/// stream takes each packet through the encoders' tap, as it does beside a file.
final class StreamOnlySink: Sink {
    let encoders: OutputEncoders
    /// Nothing stands behind it: live (`ThreadPriority.liveEncoderLevel`), x265's pool included.
    init(settings: VideoEncoderSettings) throws(MediaError) {
        encoders = try ThreadPriority.madeAtEncoderLevel(live: true, poolThreads: settings.poolThreads) { () throws(MediaError) in
            try OutputEncoders(settings: settings)
        }
    }
    var soundSamplesWritten: Int64 { encoders.soundSamplesSent }
    func write(frame: EncoderFrame, index: Int64) throws(MediaError) { try encoders.encode(frame, index: index) { _, _ in } }
    func write(sound: SampleQueue, final: Bool) throws(MediaError) { try encoders.encode(from: sound, final: final) { _, _ in } }
    func finishWriting() throws(MediaError) { try encoders.drain { _, _ in } }
}
