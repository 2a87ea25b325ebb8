import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct ResampleTests {
    @Test(arguments: [(640, 480, 160, 213), (641, 479, 160, 213), (1, 1, 160, 213), (1280, 720, 1920, 1080),
                      (4096, 2160, 1920, 1080), (3, 7, 5, 2)])
    func flatStaysFlat(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let layout = PiPLayout(canvas: Size(width: max(dw, 64), height: max(dh, 64)),
                               inset: Size(width: dw, height: dh), margin: 0)
        let compositor = try PiPCompositor(layout: layout)
        let out = I420Buffer(size: layout.canvas)
        out.view.fill(y: 0, u: 0, v: 0)
        let src = solid(Size(width: sw, height: sh), y: 123, u: 45, v: 210)
        compositor.place(SourcePicture(image: src.view, matrix: .bt709), in: layout.insetRect, of: out.view)
        let r = layout.insetRect, c = r.chroma420
        for y in r.y..<r.maxY { for x in r.x..<r.maxX { #expect(out.view.y[x, y] == 123) } }
        for y in c.y..<c.maxY { for x in c.x..<c.maxX { #expect(out.view.u[x, y] == 45 && out.view.v[x, y] == 210) } }
    }

    @Test func twoByTwoAreaAverageIsExact() {
        let src = randomPicture(Size(width: 64, height: 32), seed: 7)
        let dst = I420Buffer(size: Size(width: 32, height: 16))
        let tx = FilterTable(count: 32, origin: 0, step: 2, lower: 0, upper: 64)
        let ty = FilterTable(count: 16, origin: 0, step: 2, lower: 0, upper: 32)
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        defer { scratch.deallocate() }
        Resample.scalar(source: src.view.y, into: dst.view.y, x: tx, y: ty, scratch: scratch)
        for y in 0..<16 {
            for x in 0..<32 {
                // Rounded mean of each column pair, then of the two means (8-bit between passes).
                let s = src.view.y
                let left = (Int(s[2 * x, 2 * y]) + Int(s[2 * x, 2 * y + 1]) + 1) >> 1
                let right = (Int(s[2 * x + 1, 2 * y]) + Int(s[2 * x + 1, 2 * y + 1]) + 1) >> 1
                #expect(Int(dst.view.y[x, y]) == (left + right + 1) >> 1)
            }
        }
    }

    @Test func sameSizeSourceIsCopiedUnchanged() throws {
        let layout = PiPLayout()
        let compositor = try PiPCompositor(layout: layout)
        let src = randomPicture(layout.canvas, seed: 3)
        let out = I420Buffer(size: layout.canvas)
        compositor.compose(main: SourcePicture(image: src.view, matrix: .bt709), inset: nil, into: out.view)
        for (a, b) in zip(src.view.planes, out.view.planes) {
            for y in 0..<a.height { for x in 0..<a.width where a[x, y] != b[x, y] { Issue.record("differs at \(x),\(y)"); return } }
        }
    }
}
