@testable import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct DecodeScaleTests {
    /// The case: a 1080p camera in the 160x213 inset. Its crop is 811x1080, so 1/4
    /// (crop 203x270) still covers the inset and 1/8 (crop 101x135) does not.
    @Test func a1080pCameraInTheDefaultInsetDecodesAtAQuarter() {
        #expect(DecodeScale.largestShift(source: Size(width: 1920, height: 1080), covering: Size(width: 160, height: 213)) == 2)
    }

    @Test(arguments: [(1920, 1080, 160, 213), (1280, 720, 160, 213), (640, 360, 160, 213), (640, 480, 64, 48),
                      (3840, 2160, 160, 213), (1920, 1080, 1920, 1080), (320, 180, 640, 360), (1, 1, 1, 1)])
    func theChosenShiftCoversAndTheNextDoesNot(sw: Int, sh: Int, tw: Int, th: Int) {
        let source = Size(width: sw, height: sh), target = Size(width: tw, height: th)
        let shift = DecodeScale.largestShift(source: source, covering: target)
        func covers(_ s: Int) -> Bool {
            let c = CropRect.aspectFill(source: DecodeScale.reduced(source, shift: s), target: target)
            return c.width >= Double(tw) && c.height >= Double(th)
        }
        #expect((0...3).contains(shift))
        if shift > 0 { #expect(covers(shift)) }
        if shift < 3 { #expect(!covers(shift + 1)) }
    }

    @Test func reducedSizesRoundUpAsJPEGDecodersDo() {
        #expect(DecodeScale.reduced(Size(width: 1920, height: 1080), shift: 3) == Size(width: 240, height: 135))
        #expect(DecodeScale.reduced(Size(width: 641, height: 361), shift: 1) == Size(width: 321, height: 181))
    }
}
