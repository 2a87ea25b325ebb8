import MediaIO

/// `compose`'s output: a regular QuickTime file with its index first, written under a
/// hidden name beside OUT and renamed over it only once complete (`AtomicOutput`): a
/// failure, a cancel or a kill leaves no half-written OUT.
final class FaststartFile: Sink {
    private let output: AtomicOutput
    private let encoders: OutputEncoders
    private let writer: MovWriter

    /// The encoders open before the file: one that cannot open costs nothing at OUT.
    init(path: String, overwrite: Bool, video settings: VideoEncoderSettings, metadata: MovWriter.Metadata) throws(MediaError) {
        encoders = try OutputEncoders(settings: settings)
        output = try AtomicOutput(destination: path, overwrite: overwrite)
        writer = try MovWriter(path: output.temporaryPath, descriptor: output.descriptor, reportedPath: path,
                               encoders: encoders, metadata: metadata, layout: .faststart)
    }

    func write(frame: EncoderFrame, index: Int64) throws(MediaError) { try encoders.encode(frame, index: index, into: writer) }
    func write(sound: SampleQueue, final: Bool) throws(MediaError) { try encoders.encode(from: sound, final: final, into: writer) }
    var soundSamplesWritten: Int64 { encoders.soundSamplesSent }

    /// Completes the file and gives it OUT's name.
    func finishWriting() throws(MediaError) {
        try encoders.drain(into: writer)
        try writer.finish()
        try output.commit()
    }
}
