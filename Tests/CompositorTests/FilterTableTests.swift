import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct FilterTableTests {
    @Test(arguments: [(1, 160), (1280, 160), (641, 160), (720, 1920), (4096, 1920), (1, 1), (3, 1000),
                      (213, 213), (479, 213), (2160, 1080), (7, 5)])
    func weightsSumToOneAndTapsStayInside(src: Int, dst: Int) {
        let crop = CropRect.aspectFill(source: Size(width: src, height: src), target: Size(width: dst, height: dst))
        let t = FilterTable(count: dst, origin: crop.x, step: crop.width / Double(dst), lower: 0, upper: src)
        for i in 0..<dst {
            let w = t.weights[i * t.taps..<(i + 1) * t.taps]
            #expect(w.reduce(0) { $0 + Int($1) } == 256)
            #expect(w.allSatisfy { $0 >= 0 })
            #expect(t.starts[i] >= 0 && Int(t.starts[i]) + t.taps <= src)
        }
    }

    @Test func areaDownscaleByTwoAveragesPairs() {
        let t = FilterTable(count: 4, origin: 0, step: 2, lower: 0, upper: 8)
        #expect(t.taps == 2)
        #expect(t.starts == [0, 2, 4, 6])
        #expect(t.weights == [128, 128, 128, 128, 128, 128, 128, 128])
    }
}
