import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct RotationTests {
    @Test func displayMatrixAnglesSnapToQuarterTurns() {
        #expect(QuarterTurn(displayMatrixDegrees: -90) == .clockwise90)
        #expect(QuarterTurn(displayMatrixDegrees: 90) == .clockwise270)
        #expect(QuarterTurn(displayMatrixDegrees: 180) == .half)
        #expect(QuarterTurn(displayMatrixDegrees: -180) == .half)
        #expect(QuarterTurn(displayMatrixDegrees: 0) == QuarterTurn.none)
        #expect(QuarterTurn(displayMatrixDegrees: -89.9) == .clockwise90)
    }

    @Test(arguments: QuarterTurn.allCases)
    func quarterTurnsMovePixelsWhereExpected(turn: QuarterTurn) {
        let src = randomPicture(Size(width: 6, height: 4), seed: 11)
        let dst = I420Buffer(size: turn.rotated(src.size))
        turn.apply(src.view, into: dst.view)
        let s = src.view.y, d = dst.view.y
        for y in 0..<4 {
            for x in 0..<6 {
                let (dx, dy): (Int, Int)
                switch turn {
                case .none: (dx, dy) = (x, y)
                case .clockwise90: (dx, dy) = (3 - y, x)
                case .half: (dx, dy) = (5 - x, 3 - y)
                case .clockwise270: (dx, dy) = (y, 5 - x)
                }
                #expect(d[dx, dy] == s[x, y])
            }
        }
    }
}
