import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One of a camera's controls (exposure, focus, white balance, power-line frequency ...),
/// named as v4l2-ctl names it: the driver's label in lower case, words joined by '_'
/// ("Auto Exposure" is auto_exposure).
public struct CameraControl: Sendable, Codable, Equatable {
    public struct MenuItem: Sendable, Codable, Equatable {
        public var index: Int64
        public var name: String
    }
    public var name: String
    public var label: String
    public var id: UInt32
    /// int, bool, menu, intmenu, button, int64, bitmask, string or compound.
    public var type: String
    public var minimum: Int64
    public var maximum: Int64
    public var step: Int64
    public var defaultValue: Int64
    /// Nil when it cannot be read (a button, a write-only control, a compound one).
    public var value: Int64?
    public var readOnly: Bool
    /// Has no effect now (an absolute exposure while exposure is automatic).
    public var inactive: Bool
    public var menu: [MenuItem]?

    /// Whether `set` can write it (32-bit values through VIDIOC_S_CTRL).
    public var isSettable: Bool { ["int", "bool", "menu", "intmenu", "button", "bitmask"].contains(type) }

    /// "brightness (int): 0 to 255, default 128, now 200": what `devices` and `controls` print.
    public var summary: String {
        var range: String
        switch type {
        case "bool": range = "on/off"
        case "menu", "intmenu":
            range = (menu ?? []).map { "\($0.index)=\($0.name.isEmpty ? "?" : $0.name)" }.joined(separator: ", ")
        case "button": range = "button"
        case "bitmask": range = String(format: "bits 0x%x", UInt32(truncatingIfNeeded: maximum))
        default: range = "\(minimum) to \(maximum)" + (step > 1 ? " in steps of \(step)" : "")
        }
        var text = "\(name) (\(type)): \(range), default \(defaultValue)"
        if let value { text += ", now \(value)" }
        if readOnly { text += ", read-only" }
        if inactive { text += ", inactive" }
        return text
    }

    /// v4l2-ctl's name for a label: alphanumerics in lower case, any run of others one '_'.
    public static func name(forLabel label: String) -> String {
        var name = ""
        var gap = false
        for c in label.unicodeScalars {
            if CharacterSet.alphanumerics.contains(c) && c.isASCII {
                if gap && !name.isEmpty { name += "_" }
                gap = false
                name += String(c).lowercased()
            } else {
                gap = true
            }
        }
        return name
    }

    /// The number a setting's text stands for: a number, on/off for a boolean, or a menu
    /// entry by name ("50 Hz" as 50_hz). Nil when it is none of these.
    public func value(parsing text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let n = Int64(t) { return n }
        if type == "bool" {
            if ["on", "true", "yes"].contains(t) { return 1 }
            if ["off", "false", "no"].contains(t) { return 0 }
        }
        return menu?.first { Self.name(forLabel: $0.name) == Self.name(forLabel: t) }?.index
    }

    /// Why `value` cannot be written to this control, or nil when it can.
    public func refusal(of value: Int64) -> String? {
        if readOnly { return "it is read-only" }
        if !isSettable { return "dualcam cannot set \(type) controls" }
        if type == "menu" || type == "intmenu" {
            let items = menu ?? []
            if !items.contains(where: { $0.index == value }) {
                return "\(value) is not one of its entries (\(items.map { "\($0.index)" }.joined(separator: ", ")))"
            }
            return nil
        }
        if type != "button" && (value < minimum || value > maximum) {
            return "\(value) is out of its range, \(minimum) to \(maximum)"
        }
        return nil
    }
}

extension V4L2Device {
    static func typeName(_ type: UInt32) -> String {
        switch type {
        case V4L2_CTRL_TYPE_INTEGER.rawValue: return "int"
        case V4L2_CTRL_TYPE_BOOLEAN.rawValue: return "bool"
        case V4L2_CTRL_TYPE_MENU.rawValue: return "menu"
        case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: return "intmenu"
        case V4L2_CTRL_TYPE_BUTTON.rawValue: return "button"
        case V4L2_CTRL_TYPE_INTEGER64.rawValue: return "int64"
        case V4L2_CTRL_TYPE_BITMASK.rawValue: return "bitmask"
        case V4L2_CTRL_TYPE_STRING.rawValue: return "string"
        case V4L2_CTRL_TYPE_CTRL_CLASS.rawValue: return "class"
        default: return "compound"
        }
    }

    /// Every control the camera has, in the driver's order (class headings and disabled
    /// controls left out). A camera without controls has none.
    public func controls() -> [CameraControl] {
        var result: [CameraControl] = []
        var id = dc_V4L2_CTRL_FLAG_NEXT_CTRL()
        while result.count < 1024 {
            var q = v4l2_queryctrl()
            q.id = id
            guard (try? ioctl(dc_VIDIOC_QUERYCTRL(), "VIDIOC_QUERYCTRL", &q)) != nil else { break }
            id = q.id | dc_V4L2_CTRL_FLAG_NEXT_CTRL()
            let type = Self.typeName(q.type)
            if type == "class" || q.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 { continue }
            let label = withUnsafeBytes(of: q.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var control = CameraControl(
                name: CameraControl.name(forLabel: label), label: label, id: q.id, type: type,
                minimum: Int64(q.minimum), maximum: Int64(q.maximum), step: Int64(q.step), defaultValue: Int64(q.default_value),
                value: nil, readOnly: q.flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0,
                inactive: q.flags & UInt32(V4L2_CTRL_FLAG_INACTIVE) != 0, menu: nil)
            if type == "menu" || type == "intmenu" { control.menu = menuItems(q) }
            if control.isSettable && type != "button" && q.flags & UInt32(V4L2_CTRL_FLAG_WRITE_ONLY) == 0 {
                control.value = self.control(q.id).map { Int64($0) }
            }
            result.append(control)
        }
        return result
    }

    private func menuItems(_ q: v4l2_queryctrl) -> [CameraControl.MenuItem] {
        guard q.minimum >= 0, q.maximum >= q.minimum, q.maximum - q.minimum < 256 else { return [] }
        var items: [CameraControl.MenuItem] = []
        var name = [CChar](repeating: 0, count: 64)
        for index in q.minimum...q.maximum {
            var value: Int64 = 0
            // Entries a driver skips answer EINVAL.
            guard dc_querymenu(fd, throughLibv4l2 ? 1 : 0, q.id, UInt32(index), &name, name.count, &value) == 0 else { continue }
            let text = q.type == V4L2_CTRL_TYPE_INTEGER_MENU.rawValue ? "\(value)"
                : String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            items.append(.init(index: Int64(index), name: text))
        }
        return items
    }

    /// Writes a control's value.
    public func setControl(_ id: UInt32, to value: Int32) throws(V4L2Error) {
        var c = v4l2_control(id: id, value: value)
        try ioctl(dc_VIDIOC_S_CTRL(), "VIDIOC_S_CTRL", &c)
    }
}

/// A control to set, as the user wrote it: `brightness=200`, `auto_exposure=1`,
/// `power_line_frequency=50_hz`.
public struct ControlSetting: Sendable, Codable, Equatable, CustomStringConvertible {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
    public var description: String { "\(name)=\(value)" }

    /// "NAME=VALUE[,NAME=VALUE...]"; nil (with why) when a part is not of that form.
    public static func parseList(_ text: String) -> Result<[ControlSetting], ControlSettingError> {
        var settings: [ControlSetting] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pieces.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard pieces.count == 2, !name.isEmpty, !pieces[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                return .failure(ControlSettingError(text: String(part)))
            }
            settings.append(ControlSetting(name: name.lowercased(), value: String(pieces[1]).trimmingCharacters(in: .whitespaces)))
        }
        return .success(settings)
    }

    /// The order to write them in: the automatic modes first (auto_exposure,
    /// white_balance_automatic, focus_automatic_continuous ...), since a camera refuses an
    /// absolute exposure, temperature or focus while the automatic one is on; otherwise as given.
    public static func inApplyingOrder(_ settings: [ControlSetting]) -> [ControlSetting] {
        func isAutomaticMode(_ s: ControlSetting) -> Bool { s.name.contains("auto") }
        return settings.filter(isAutomaticMode) + settings.filter { !isAutomaticMode($0) }
    }
}

public struct ControlSettingError: Error, CustomStringConvertible {
    public var text: String
    public var description: String { "'\(text)' is not NAME=VALUE" }
}

extension V4L2Device {
    /// Writes `settings` in the order that works (`inApplyingOrder`). Returns one line per
    /// setting that could not be written (unknown, read-only, out of range, refused by the
    /// driver), and what was written. Never throws: a control is never worth a recording.
    public func apply(_ settings: [ControlSetting]) -> (applied: [ControlSetting], failures: [String]) {
        var applied: [ControlSetting] = [], failures: [String] = []
        var known = controls()
        for setting in ControlSetting.inApplyingOrder(settings) {
            guard let control = known.first(where: { $0.name == setting.name }) else {
                let names = known.filter { !$0.readOnly && $0.isSettable && $0.type != "button" }.map(\.name)
                failures.append("\(setting) not set: the camera has no such control (it has \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
                continue
            }
            guard let value = control.value(parsing: setting.value) else {
                failures.append("\(setting) not set: '\(setting.value)' is not a value of \(control.summary)")
                continue
            }
            if let why = control.refusal(of: value) {
                failures.append("\(setting) not set: \(why)")
                continue
            }
            guard let value32 = Int32(exactly: value) else {
                failures.append("\(setting) not set: too large")
                continue
            }
            do throws(V4L2Error) {
                try setControl(control.id, to: value32)
                applied.append(setting)
            } catch {
                let inactive = control.inactive ? " (inactive: an automatic mode overrides it)" : ""
                failures.append("\(setting) not set: \(String(cString: strerror(error.code)))\(inactive)")
            }
            // Setting a mode can (de)activate others: read the flags again.
            if setting.name.contains("auto") { known = controls() }
        }
        return (applied, failures)
    }
}
