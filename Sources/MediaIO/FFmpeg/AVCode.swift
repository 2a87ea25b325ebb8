import CFFmpeg

/// FFmpeg's text for an AVERROR code.
public func averrorText(_ code: Int32) -> String {
    var buf = [CChar](repeating: 0, count: 256)
    return buf.withUnsafeMutableBufferPointer { b in
        String(cString: dc_av_err2str(code, b.baseAddress, b.count))
    }
}

enum AVCode {
    static let eof = dc_averror_eof()
    static let again = dc_averror_eagain()
    static let noPTS = dc_av_nopts_value()
}

/// Turns a negative FFmpeg return code into a thrown error; passes others through.
@discardableResult
package func check(_ code: Int32, _ error: (String) -> MediaError) throws(MediaError) -> Int32 {
    if code < 0 { throw error(averrorText(code)) }
    return code
}

/// FFmpeg's own logging goes to stderr, which would break one-line errors; it stays
/// silent unless asked for.
public enum FFmpegLog {
    public static func setVerbose(_ verbose: Bool) {
        av_log_set_level(verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
        if verbose { Secrets.maskFFmpegLog() }
    }
}
