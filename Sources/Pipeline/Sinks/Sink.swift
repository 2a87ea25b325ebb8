import MediaIO

/// Where the engine's output goes: output frames in order, the sound that goes with them,
/// then an end. `compose` writes to a `FaststartFile`, `record` (through its `EncodeQueue`)
/// to a `RecordingFile`; an output of another kind (a virtual camera, a stream) is one more
/// conformer, and neither the frame loops nor the encode queue change for it.
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
