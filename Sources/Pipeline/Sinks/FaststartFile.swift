import MediaIO

/// `compose`'s output: a regular QuickTime file with its index first, written under a
/// hidden name beside OUT and renamed over it only once complete (`AtomicOutput`): a
/// failure, a cancel or a kill leaves no half-written OUT.
final class FaststartFile: EncodedMovSink {
    private let output: AtomicOutput
    let encoders: OutputEncoders
    let writer: MovWriter

    /// The encoders open before the file: one that cannot open costs nothing at OUT.
    init(path: String, overwrite: Bool, video settings: VideoEncoderSettings, metadata: MovWriter.Metadata) throws(MediaError) {
        encoders = try ThreadPriority.madeAtProcessLevel(poolThreads: settings.poolThreads) { () throws(MediaError) in
            try OutputEncoders(settings: settings)
        }
        output = try AtomicOutput(destination: path, overwrite: overwrite)
        writer = try MovWriter(path: output.temporaryPath, descriptor: output.descriptor, reportedPath: path,
                               encoders: encoders, metadata: metadata, layout: .faststart)
    }

    /// Completes the file and gives it OUT's name.
    func finishWriting() throws(MediaError) {
        try writeTheRestAndTrailer()
        try output.commit()
    }
}
