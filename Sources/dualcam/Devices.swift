import ArgumentParser
import Foundation
import MediaIO

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the V4L2 cameras (path, card, bus, pixel formats, sizes, frame rates) and the ALSA capture devices (channels, rates, sample formats).",
        discussion: """
            What record can use: the cameras --back and --front take, their controls, and the \
            microphones --audio takes, the system's default first.

            EXAMPLES:
              What is plugged in:
                dualcam devices
              The cameras' paths, for a script (jq):
                dualcam devices --json | jq -r '.devices[].path'
            """)

    @Flag(help: "Print one line of JSON on stdout, for scripts.") var json = false

    struct Listing: Encodable {
        var devices: [CaptureDeviceInfo]
        var audio: [AudioDeviceInfo]
        /// ALSA's `default`, what record captures with no --audio; nil when it cannot be opened.
        var defaultAudio: AudioDeviceInfo?
        var defaultAudioError: String?
        var soundServer: SoundServer?
    }

    func run() throws {
        let (defaultAudio, error) = ALSADevices.defaultDevice()
        let listing = Listing(devices: V4L2Device.list(), audio: ALSADevices.list(), defaultAudio: defaultAudio,
                              defaultAudioError: error, soundServer: SoundServer.find())
        if json {
            print(try JSONOutput.line(schema: "dualcam.devices/1", listing))
            return
        }
        printCameras(listing.devices)
        printDefaultMicrophone(listing)
        // With neither, the line above said it all.
        if listing.defaultAudio != nil || !listing.audio.isEmpty { printMicrophones(listing.audio) }
    }

    private func printDefaultMicrophone(_ listing: Listing) {
        if let d = listing.defaultAudio {
            printLine("default: the system's default capture device, what record uses with no --audio" + describe(d))
        } else if listing.audio.isEmpty {
            printLine("no microphone: no default capture device (\(listing.defaultAudioError ?? "it cannot be opened")) and no ALSA "
                  + "capture device: record writes a silent track. Plug in a microphone or start the sound server "
                  + "(PipeWire, PulseAudio); with files as cameras, --audio back records the back file's sound")
        } else {
            printLine("default: cannot be opened (\(listing.defaultAudioError ?? "?")): record with no --audio takes the first "
                  + "device below that opens")
        }
        if let server = listing.soundServer {
            let sources = server.sources.map { $0 == server.defaultSource ? "\($0) (default)" : $0 }
            printLine("  sound server: \(server.name); sources: \(sources.isEmpty ? "none" : sources.joined(separator: ", ")); \(server.howToPick)")
        }
    }

    private func describe(_ d: AudioDeviceInfo) -> String {
        func range(_ r: ClosedRange<Int>?) -> String { r.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" } ?? "?" }
        guard d.channels != nil || d.rates != nil else { return "" }
        return ": \(range(d.channels)) channels, \(range(d.rates)) Hz, " + d.formats.joined(separator: " ")
    }

    private func printCameras(_ devices: [CaptureDeviceInfo]) {
        if devices.isEmpty { printLine("no V4L2 capture devices") }
        for d in devices {
            printLine("\(d.path): \(d.card) (\(d.driver), \(d.bus))")
            for f in d.formats {
                printLine("  \(f.fourcc) \(f.description)\(f.emulated ? " [converted by libv4l2]" : "")")
                for m in f.modes {
                    let rates = m.framesPerSecond.map { String(format: "%g", $0) }.joined(separator: ", ")
                    printLine("    \(m.width)x\(m.height)" + (rates.isEmpty ? "" : " @ \(rates) fps"))
                }
            }
            if !d.controls.isEmpty {
                printLine("  controls (record --control back:NAME=VALUE; dualcam controls \(d.path) --set NAME=VALUE --save):")
                for c in d.controls { printLine("    \(c.summary)") }
            }
        }
    }

    private func printMicrophones(_ devices: [AudioDeviceInfo]) {
        if devices.isEmpty { printLine("no ALSA capture devices") }
        for d in devices {
            var line = "\(d.device): \(d.card) (\(d.name))"
            if d.busy { line += ": busy (another program is capturing)" }
            printLine(line + describe(d))
        }
    }
}
