import Compositor
import Foundation

/// A JPEG decoded on one thread while the other converts the rows already decoded: the
/// conversion (range and matrix, ~1 ms for 1080p on two threads after the decode) hides
/// behind the decode, and reads rows still in cache. For `ForkJoin`: half 0 decodes, half 1
/// converts. Kept and refilled for every frame.
final class BandedJPEGConversion: ForkJoinJob {
    var decoder: JPEGPlanarDecoder?
    var picture: JPEGPlanarDecoder.Picture?
    var output: I420View?
    var conversion: ColorConversion?
    /// Why the decode stopped, when it did.
    private(set) var error: MediaError?

    private let progress = NSCondition()
    /// Output chroma rows whose source rows are decoded; -1 once the decode has failed.
    private var readyChromaRows = 0

    func prepare(decoder: JPEGPlanarDecoder, picture: JPEGPlanarDecoder.Picture, output: I420View,
                 conversion: ColorConversion) {
        (self.decoder, self.picture, self.output, self.conversion) = (decoder, picture, output, conversion)
        error = nil
        readyChromaRows = 0
    }

    func clear() { (decoder, picture, output) = (nil, nil, nil) }

    /// Part 0 decodes, part 1 converts (a two-part `ForkJoin`).
    func run(part: Int, of parts: Int) {
        guard let decoder, let picture, let output, let conversion else { return }
        if part == 0 { decode(decoder, picture, chromaRows: output.u.height) } else { convert(picture, output, conversion) }
    }

    private func decode(_ decoder: JPEGPlanarDecoder, _ picture: JPEGPlanarDecoder.Picture, chromaRows: Int) {
        let stride = max(1, picture.bands / 8)
        for band in 0..<picture.bands {
            do {
                try decoder.readBand(band)
            } catch {
                self.error = error
                publish(-1)
                return
            }
            // The converting thread is woken a few times a frame, not at every band: woken
            // that often, the scheduler tended to run it on the decoding core.
            guard (band + 1) % stride == 0 || band == picture.bands - 1 else { continue }
            let lumaRows = (band + 1) * picture.lumaRowsPerBand
            // A chroma row is ready once both luma rows it covers are (and its 4:2:2 pair).
            publish(lumaRows >= picture.size.height ? chromaRows : lumaRows / 2)
        }
    }

    private func publish(_ rows: Int) {
        progress.lock()
        readyChromaRows = rows
        progress.signal()
        progress.unlock()
    }

    private func convert(_ picture: JPEGPlanarDecoder.Picture, _ output: I420View, _ conversion: ColorConversion) {
        var done = 0
        while done < output.u.height {
            progress.lock()
            while readyChromaRows >= 0 && readyChromaRows <= done { progress.wait() }
            let ready = readyChromaRows
            progress.unlock()
            guard ready > done else { return }
            JPEGRange.convertSIMD(picture.source, into: output, converting: conversion, chromaRows: done..<ready)
            done = ready
        }
    }
}
