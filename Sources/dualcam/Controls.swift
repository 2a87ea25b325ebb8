import ArgumentParser
import Foundation
import MediaIO
import Pipeline

struct Controls: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show, set and save a camera's controls (exposure, focus, white balance, power-line frequency ...).",
        discussion: """
            With no --set, lists the camera's controls: name, type, range, default and current value. \
            --set writes them now, automatic modes first (auto_exposure before exposure_time_absolute). \
            --save keeps them for this camera (the --set ones, or with none every value that differs from its default), \
            and record applies them whenever the camera opens, after a replug too; --forget drops what is saved.

            EXAMPLES:
              What the camera offers, with current values:
                dualcam controls /dev/video0
              Fix the exposure and keep it for every recording with this camera:
                dualcam controls /dev/video0 \\
                  --set auto_exposure=1,exposure_time_absolute=250 --save
            """)

    @Argument(help: ArgumentHelp("The camera.", valueName: "/dev/videoN"),
              completion: .custom { _, _, prefix in Completions.camerasAndFiles(prefix, filesToo: false) }) var device: String
    @Option(name: .customLong("set"), help: ArgumentHelp("A control to write (repeatable, or comma-separated).", valueName: "NAME=VALUE"),
            completion: .custom { arguments, _, _ in
                arguments.first { $0.hasPrefix("/dev/") }.map { Completions.controlNames($0).map { "\($0)=" } } ?? [] })
    var settings: [String] = []
    @Flag(help: "Save the settings for this camera: record applies them whenever it opens.") var save = false
    @Flag(help: "Forget what is saved for this camera.") var forget = false
    @Flag(help: "Print one line of JSON on stdout, for scripts.") var json = false

    func validate() throws {
        for s in settings {
            if case let .failure(e) = ControlSetting.parseList(s) { throw ValidationError("--set: \(e)") }
        }
        if save && forget { throw ValidationError("--save and --forget exclude each other") }
    }

    func run() throws {
        let camera: V4L2Device, caps: V4L2Device.Capabilities
        do {
            camera = try V4L2Device(path: device)
            caps = try camera.capabilities()
        } catch { throw Failure(error.description) }
        let wanted = settings.flatMap { (try? ControlSetting.parseList($0).get()) ?? [] }
        let (applied, failures) = camera.apply(wanted)
        for failure in failures { say("\(device): control \(failure)") }
        guard let store = ControlStore.standard() else { throw Failure("no home folder to save controls in (set HOME or XDG_CONFIG_HOME)") }
        if save || forget {
            let toSave = wanted.isEmpty
                ? camera.controls().filter { c in !c.readOnly && c.type != "button" && c.value.map { $0 != c.defaultValue } == true }
                    .map { ControlSetting(name: $0.name, value: "\($0.value!)") }
                : applied
            do {
                try store.save(forget ? [] : toSave, bus: caps.bus, card: caps.card, driver: caps.driver,
                               replacing: forget || wanted.isEmpty)
            } catch { throw Failure(error.description) }
            if !json {
                printLine(forget ? "forgot the controls saved for \(caps.card) (\(caps.bus))"
                      : "saved for \(caps.card) (\(caps.bus)) in \(store.url.path): "
                        + (toSave.isEmpty ? "nothing (every control at its default)" : toSave.map(\.description).joined(separator: ", ")))
            }
        }
        let controls = camera.controls()
        let saved = store.saved(bus: caps.bus, card: caps.card, driver: caps.driver)
        if json {
            struct Listing: Encodable { var device: String; var controls: [CameraControl]; var saved: [ControlSetting] }
            print(try JSONOutput.line(schema: "dualcam.controls/1", Listing(device: device, controls: controls, saved: saved)))
        } else if !save && !forget {
            printLine("\(device): \(caps.card) (\(caps.driver), \(caps.bus))")
            if controls.isEmpty { printLine("  no controls") }
            for c in controls { printLine("  \(c.summary)") }
            if !saved.isEmpty { printLine("  saved, applied when it opens: \(saved.map(\.description).joined(separator: ", "))") }
        }
        if !failures.isEmpty { throw ExitCode(1) }
    }
}
