import ArgumentParser
import Foundation
import MediaIO

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the V4L2 capture devices: path, card, bus, pixel formats, sizes and frame rates.")

    @Flag(help: "Print JSON for scripts.") var json = false

    func run() throws {
        let devices = V4L2Device.list()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(["devices": devices]), as: UTF8.self))
            return
        }
        if devices.isEmpty {
            print("no V4L2 capture devices")
            return
        }
        for d in devices {
            print("\(d.path): \(d.card) (\(d.driver), \(d.bus))")
            for f in d.formats {
                print("  \(f.fourcc) \(f.description)\(f.emulated ? " [converted by libv4l2]" : "")")
                for m in f.modes {
                    let rates = m.framesPerSecond.map { String(format: "%g", $0) }.joined(separator: ", ")
                    print("    \(m.width)x\(m.height)" + (rates.isEmpty ? "" : " @ \(rates) fps"))
                }
            }
        }
    }
}
