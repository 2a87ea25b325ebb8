import CVectorOps

/// The horizontal pass straight along a row, for enlarging: each block of 16 destination
/// pixels reads within 16 source bytes, so one load and one byte shuffle per tap give every
/// pixel its source bytes, where the general kernel transposes 16x16 tiles to filter
/// columns and transposes them back (about two thirds of a 720p-to-1080p enlargement).
extension Kernels {
    /// The same result as `horizontalScalar` with offset 0, to the bit (weights are at most
    /// 256 and sum to 256: every sum fits 16 bits and needs no clamping).
    public static func horizontalShuffledSIMD(_ row: UnsafePointer<UInt8>, table: FilterTable.Shuffled, taps: Int,
                                              into out: UnsafeMutablePointer<UInt8>) {
        if let blocks = table.lerp {
            shuffledLerpBlocks(row, blocks, out)
            return
        }
        switch taps {
        case 1: shuffledBlocks(row, table, taps: 1, out)
        default: shuffledBlocks(row, table, taps: taps, out)
        }
    }

    /// The two-tap shuffled kernel through `lerp`, for tables that have `FilterTable.Shuffled.lerp`.
    static func shuffledLerpBlocks(_ row: UnsafePointer<UInt8>, _ blocks: [FilterTable.Shuffled.LerpBlock],
                                   _ out: UnsafeMutablePointer<UInt8>) {
        let src = UnsafeRawPointer(row), dst = UnsafeMutableRawPointer(out)
        blocks.withUnsafeBufferPointer { blocks in
            for block in blocks {
                let bytes = src.loadUnaligned(fromByteOffset: block.load, as: SIMD16<UInt8>.self)
                let result = lerp(dc_shuffle_bytes(bytes, block.bases), dc_shuffle_bytes(bytes, block.others),
                                  scale: block.scales)
                dst.storeBytes(of: result, toByteOffset: block.destination, as: SIMD16<UInt8>.self)
            }
        }
    }

    /// `taps` constant at the call sites above, so that the tap loop unrolls.
    @inline(__always)
    private static func shuffledBlocks(_ row: UnsafePointer<UInt8>, _ table: FilterTable.Shuffled, taps: Int,
                                       _ out: UnsafeMutablePointer<UInt8>) {
        let src = UnsafeRawPointer(row), dst = UnsafeMutableRawPointer(out)
        table.loads.withUnsafeBufferPointer { loads in
            table.blockStarts.withUnsafeBufferPointer { blockStarts in
                table.indices.withUnsafeBufferPointer { indices in
                    table.weights.withUnsafeBufferPointer { weights in
                        for b in 0..<loads.count {
                            let bytes = src.loadUnaligned(fromByteOffset: Int(loads[b]), as: SIMD16<UInt8>.self)
                            var low = SIMD8<UInt16>(repeating: 128), high = SIMD8<UInt16>(repeating: 128)
                            for k in 0..<taps {
                                let picked = dc_shuffle_bytes(bytes, indices[b &* taps &+ k])
                                let weight = weights[b &* taps &+ k]
                                let (pickedLow, pickedHigh) = Lanes.widenUnsigned(picked)
                                low &+= pickedLow &* weight.lowHalf
                                high &+= pickedHigh &* weight.highHalf
                            }
                            dst.storeBytes(of: Lanes.narrow(low &>> 8, high &>> 8), toByteOffset: Int(blockStarts[b]),
                                           as: SIMD16<UInt8>.self)
                        }
                    }
                }
            }
        }
    }

}
