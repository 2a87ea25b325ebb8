import CFFmpeg
import Compositor
import MediaIO

/// libswscale scaling one I420 picture (or a whole-pixel crop of it) into a plane-set region:
/// the reference the compositor's kernels are benchmarked against. Owns its SwsContext.
public final class SwscaleScaler {
    private let scaler: ScalerContext
    private var context: OpaquePointer { scaler.pointer }
    public let crop: Rect
    public let destination: Size

    public enum Filter { case area, bilinear }
    /// What it reads: I420 planes, or packed 4:2:2 as a webcam sends (YUYV).
    public enum Source { case i420, yuyv }

    /// `convertBT601` makes libswscale re-encode BT.601 to BT.709, as the compositor does.
    public init?(crop: Rect, destination: Size, filter: Filter, convertBT601: Bool = false, source: Source = .i420) {
        let flags = filter == .area ? SWS_AREA : SWS_BILINEAR
        let format = source == .i420 ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_YUYV422
        guard let scaler = ScalerContext(from: Size(width: crop.width, height: crop.height), format, to: destination,
                                         AV_PIX_FMT_YUV420P, flags: Int32(flags)) else { return nil }
        self.scaler = scaler
        self.crop = crop
        self.destination = destination
        if convertBT601 {
            sws_setColorspaceDetails(scaler.pointer, sws_getCoefficients(SWS_CS_ITU601), 0, sws_getCoefficients(SWS_CS_ITU709), 0,
                                     0, 1 << 16, 1 << 16)
        }
    }

    /// Scales the crop of a YUYV picture at `base` (rows `stride` bytes apart) into `output`.
    public func scale(yuyv base: UnsafeRawPointer, stride: Int, into output: I420View) {
        let start = base.assumingMemoryBound(to: UInt8.self) + crop.y * stride + (crop.x & ~1) * 2
        withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 4) { src in
            withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { dst in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: 8) { strides in
                    src[0] = start; src[1] = nil; src[2] = nil; src[3] = nil
                    dst[0] = output.y.base; dst[1] = output.u.base; dst[2] = output.v.base; dst[3] = nil
                    strides[0] = Int32(stride); strides[1] = 0; strides[2] = 0; strides[3] = 0
                    strides[4] = Int32(output.y.stride); strides[5] = Int32(output.u.stride)
                    strides[6] = Int32(output.v.stride); strides[7] = 0
                    _ = sws_scale(context, src.baseAddress, strides.baseAddress, 0, Int32(crop.height),
                                  dst.baseAddress, strides.baseAddress! + 4)
                }
            }
        }
    }

    /// Scales the crop of `source` into `output` (destination-sized planes).
    public func scale(_ source: I420View, into output: I420View) {
        let cx = crop.x & ~1, cy = crop.y & ~1  // chroma-aligned
        withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 4) { src in
            withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { dst in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: 8) { strides in
                    src[0] = UnsafePointer(source.y.base + cy * source.y.stride + cx)
                    src[1] = UnsafePointer(source.u.base + cy / 2 * source.u.stride + cx / 2)
                    src[2] = UnsafePointer(source.v.base + cy / 2 * source.v.stride + cx / 2)
                    src[3] = nil
                    dst[0] = output.y.base; dst[1] = output.u.base; dst[2] = output.v.base; dst[3] = nil
                    strides[0] = Int32(source.y.stride); strides[1] = Int32(source.u.stride)
                    strides[2] = Int32(source.v.stride); strides[3] = 0
                    strides[4] = Int32(output.y.stride); strides[5] = Int32(output.u.stride)
                    strides[6] = Int32(output.v.stride); strides[7] = 0
                    _ = sws_scale(context, src.baseAddress, strides.baseAddress, 0, Int32(crop.height),
                                  dst.baseAddress, strides.baseAddress! + 4)
                }
            }
        }
    }
}
