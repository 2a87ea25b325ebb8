import CFFmpeg

/// The FFmpeg libraries this process runs with (which may be newer than the headers it was
/// built against), as `dualcam --version` reports them for bug reports.
public enum LibraryVersions {
    public static var ffmpeg: String {
        func dotted(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xff).\(v & 0xff)" }
        return "libavcodec \(dotted(avcodec_version())), libavformat \(dotted(avformat_version())), "
            + "libavutil \(dotted(avutil_version()))"
    }
}
