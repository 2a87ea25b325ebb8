import CALSA
import Foundation

/// An ALSA capture device and what it can capture.
public struct AudioDeviceInfo: Sendable, Codable {
    /// What `--audio` takes: `hw:CARD,DEVICE`.
    public var device: String
    public var card: String
    public var name: String
    /// Nil when the device could not be opened to ask (busy: another program records).
    public var channels: ClosedRange<Int>?
    public var rates: ClosedRange<Int>?
    public var formats: [String]
    public var busy: Bool
}

public enum ALSADevices {
    /// Whether `name` is one to open as a microphone: a PCM defined by name (default, pipewire,
    /// pulse, one of the user's own in ~/.asoundrc), or a card's (hw, plughw, default,
    /// sysdefault, dsnoop) with plain arguments (`hw:1,0`, `plughw:CARD=C920,DEV=0`). Nothing
    /// else: ALSA's names are a language, in which `file:'|cmd'` runs a command and
    /// `file:PATH` truncates and fills any file, so --audio must not reach it as it is.
    public static func isCaptureName(_ name: String) -> Bool {
        let word = "[A-Za-z][A-Za-z0-9_-]*"
        if name.range(of: "^\(word)$", options: .regularExpression) != nil { return true }
        let argument = "[A-Za-z0-9_]+(=[A-Za-z0-9_.-]+)?"
        return name.range(of: "^(hw|plughw|default|sysdefault|dsnoop):\(argument)(,\(argument))*$", options: .regularExpression) != nil
    }

    /// Every PCM capture device of every sound card, by card and device number.
    public static func list() -> [AudioDeviceInfo] {
        dc_snd_quiet()
        var result: [AudioDeviceInfo] = []
        var card: Int32 = -1
        while snd_card_next(&card) >= 0 && card >= 0 {
            var ctl: OpaquePointer?
            guard snd_ctl_open(&ctl, "hw:\(card)", 0) >= 0, let ctl else { continue }
            defer { snd_ctl_close(ctl) }
            var cardInfo: OpaquePointer?
            snd_ctl_card_info_malloc(&cardInfo)
            defer { snd_ctl_card_info_free(cardInfo) }
            let cardName = snd_ctl_card_info(ctl, cardInfo) >= 0 ? String(cString: snd_ctl_card_info_get_name(cardInfo)) : "card \(card)"
            var pcmInfo: OpaquePointer?
            snd_pcm_info_malloc(&pcmInfo)
            defer { snd_pcm_info_free(pcmInfo) }
            var device: Int32 = -1
            while snd_ctl_pcm_next_device(ctl, &device) >= 0 && device >= 0 {
                snd_pcm_info_set_device(pcmInfo, UInt32(device))
                snd_pcm_info_set_subdevice(pcmInfo, 0)
                snd_pcm_info_set_stream(pcmInfo, SND_PCM_STREAM_CAPTURE)
                guard snd_ctl_pcm_info(ctl, pcmInfo) >= 0 else { continue }  // playback only
                let name = String(cString: snd_pcm_info_get_name(pcmInfo))
                result.append(describe("hw:\(card),\(device)", card: cardName, name: name))
            }
        }
        return result
    }

    /// ALSA's `default` capture device (on a PipeWire or PulseAudio desktop, the sound
    /// server), or why it cannot be opened.
    public static func defaultDevice() -> (AudioDeviceInfo?, String?) {
        dc_snd_quiet()
        let (info, failure) = probe("default", card: "default", name: "the system's default")
        return failure.map { (nil, openFailure($0)) } ?? (info, nil)
    }

    /// Why a device could not be opened, in words: a sound server's plugin (ALSA's `default`
    /// on a desktop) that finds no server says only "Host is down" or "Connection refused".
    static func openFailure(_ rc: Int32) -> String {
        if rc == -EHOSTDOWN || rc == -ECONNREFUSED {
            return "no sound server (PipeWire or PulseAudio) answers: \(String(cString: snd_strerror(rc)))"
        }
        return String(cString: snd_strerror(rc))
    }

    /// Opens the device without waiting (a busy one is reported as such) and reads the
    /// ranges its hardware parameters allow.
    static func describe(_ device: String, card: String, name: String) -> AudioDeviceInfo {
        probe(device, card: card, name: name).info
    }

    /// `describe`, with the error code when the device could not be opened (one open, so a
    /// sound server is connected to once).
    private static func probe(_ device: String, card: String, name: String) -> (info: AudioDeviceInfo, openError: Int32?) {
        var info = AudioDeviceInfo(device: device, card: card, name: name, channels: nil, rates: nil, formats: [], busy: false)
        var pcm: OpaquePointer?
        let rc = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard rc >= 0, let pcm else {
            info.busy = rc == -EBUSY
            return (info, rc)
        }
        defer { snd_pcm_close(pcm) }
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        guard snd_pcm_hw_params_any(pcm, hw) >= 0 else { return (info, nil) }
        var cmin: UInt32 = 0, cmax: UInt32 = 0, rmin: UInt32 = 0, rmax: UInt32 = 0
        var dir: Int32 = 0
        if snd_pcm_hw_params_get_channels_min(hw, &cmin) >= 0, snd_pcm_hw_params_get_channels_max(hw, &cmax) >= 0, cmin <= cmax {
            info.channels = Int(cmin)...Int(cmax)
        }
        if snd_pcm_hw_params_get_rate_min(hw, &rmin, &dir) >= 0, snd_pcm_hw_params_get_rate_max(hw, &rmax, &dir) >= 0, rmin <= rmax {
            info.rates = Int(rmin)...Int(rmax)
        }
        for f in [SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S24_LE, SND_PCM_FORMAT_S24_3LE, SND_PCM_FORMAT_S32_LE,
                  SND_PCM_FORMAT_FLOAT_LE, SND_PCM_FORMAT_U8] where snd_pcm_hw_params_test_format(pcm, hw, f) == 0 {
            info.formats.append(String(cString: snd_pcm_format_name(f)))
        }
        return (info, nil)
    }

    /// The card and device a `hw:`/`plughw:` name points at (`hw:1,0`, `hw:Loopback,1,0`,
    /// `plughw:CARD=C920,DEV=0`), or nil for other names.
    static func cardAndDevice(_ name: String) -> (card: Int32, device: Int)? {
        guard let colon = name.firstIndex(of: ":"), ["hw", "plughw"].contains(String(name[..<colon])) else { return nil }
        let parts = name[name.index(after: colon)...].split(separator: ",").map { part -> String in
            let p = String(part)
            return p.contains("=") ? String(p.split(separator: "=", maxSplits: 1).last ?? "") : p
        }
        guard let first = parts.first else { return nil }
        let card = snd_card_get_index(first)
        guard card >= 0 else { return nil }
        return (card, parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
    }

    /// Who has a capture device open, as the kernel tells (`/proc/asound`): "pipewire (pid 812)".
    public static func holder(of name: String) -> String? {
        guard let (card, device) = cardAndDevice(name) else { return nil }
        let folder = "/proc/asound/card\(card)/pcm\(device)c"
        let subs = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("sub") }.sorted()
        for sub in subs {
            guard let status = try? String(contentsOfFile: "\(folder)/\(sub)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("owner_pid") {
                guard let pid = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else { continue }
                let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return "\(command ?? "a program") (pid \(pid))"
            }
        }
        return nil
    }
}
