import ArgumentParser
import Foundation
import MediaIO

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the V4L2 cameras (path, card, bus, pixel formats, sizes, frame rates) and the ALSA capture devices (channels, rates, sample formats).")

    @Flag(help: "Print JSON for scripts.") var json = false

    struct Listing: Encodable {
        var devices: [CaptureDeviceInfo]
        var audio: [AudioDeviceInfo]
    }

    func run() throws {
        let listing = Listing(devices: V4L2Device.list(), audio: ALSADevices.list())
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(listing), as: UTF8.self))
            return
        }
        printCameras(listing.devices)
        printMicrophones(listing.audio)
    }

    private func printCameras(_ devices: [CaptureDeviceInfo]) {
        if devices.isEmpty { print("no V4L2 capture devices") }
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

    private func printMicrophones(_ devices: [AudioDeviceInfo]) {
        if devices.isEmpty { print("no ALSA capture devices") }
        for d in devices {
            var line = "\(d.device): \(d.card) (\(d.name))"
            if d.busy { line += ": busy (another program is capturing)" }
            func range(_ r: ClosedRange<Int>?) -> String { r.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" } ?? "?" }
            if d.channels != nil || d.rates != nil {
                line += ": \(range(d.channels)) channels, \(range(d.rates)) Hz, " + d.formats.joined(separator: " ")
            }
            print(line)
        }
    }
}
