import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct ColorTests {
    /// R'G'B' (0...1) encoded to limited-range Y'CbCr with a matrix, as an encoder would.
    func encode(_ rgb: (Double, Double, Double), _ kr: Double, _ kb: Double) -> (UInt8, UInt8, UInt8) {
        let kg = 1 - kr - kb
        let y = kr * rgb.0 + kg * rgb.1 + kb * rgb.2
        let pb = (rgb.2 - y) / (2 * (1 - kb)), pr = (rgb.0 - y) / (2 * (1 - kr))
        return (UInt8((16 + 219 * y).rounded()), UInt8((128 + 224 * pb).rounded()), UInt8((128 + 224 * pr).rounded()))
    }

    @Test(arguments: [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0), (0.2, 0.5, 0.8),
                      (0.5, 0.5, 0.5)])
    func bt601BecomesTheSameColourInBt709(r: Double, g: Double, b: Double) {
        let c601 = encode((r, g, b), 0.299, 0.114)
        let c709 = encode((r, g, b), 0.2126, 0.0722)
        let img = solid(Size(width: 4, height: 4), y: c601.0, u: c601.1, v: c601.2)
        ColorConversion(from: .bt601, to: .bt709)!.apply(to: img.view, lumaRect: Rect(x: 0, y: 0, width: 4, height: 4))
        #expect(abs(Int(img.view.y[1, 1]) - Int(c709.0)) <= 1)
        #expect(abs(Int(img.view.u[1, 1]) - Int(c709.1)) <= 1)
        #expect(abs(Int(img.view.v[1, 1]) - Int(c709.2)) <= 1)
    }

    @Test func sameMatrixNeedsNoConversion() {
        #expect(ColorConversion(from: .bt709, to: .bt709) == nil)
    }
}
