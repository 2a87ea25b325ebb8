import Foundation
import Testing

/// What `compose` prints on a terminal (a pseudo-terminal here, as a user's shell gives it),
/// off one, and with --quiet and --json.
@Suite(.serialized, .timeLimit(.minutes(10))) struct TerminalTests {
    /// Runs dualcam with its stdout and stderr on a pseudo-terminal (Python's pty module)
    /// `columns` wide; returns everything written there.
    static func onTerminal(_ arguments: [String], columns: Int = 200) throws -> RunResult {
        let script = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)"
        let shell = "stty cols \(columns) rows 40; exec \"$0\" \"$@\""
        return try run("/usr/bin/env", ["python3", "-c", script, "sh", "-c", shell, Env.dualcam] + arguments)
    }

    static let composeArguments = ["compose", Reference.back, Reference.front]

    /// The end of a Python script that forked a child on a pseudo-terminal (`pid`, `fd`):
    /// reads what it writes there to the end, prints it and exits with the child's status.
    static let collectTerminalOutput = """
        out = globals().get('seen', b'')  # what wait_for read already
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode(errors='replace'))
        sys.exit(os.WEXITSTATUS(status))
        """

    /// `record` of a 12 s 640x360 test picture with no sound, on a pseudo-terminal that a
    /// Python body types into (`fd`, with `os` and `time`, and `wait_for(text)`, which reads
    /// until the program has written `text` and fails the script after 60 s); returns all
    /// it wrote there.
    static func recordOnTerminal(in dir: TempDir, typing body: String, _ arguments: [String]) throws -> RunResult {
        let camera = dir.path("camera.mp4")
        try makeClip(camera, ["-f", "lavfi", "-i", "testsrc=s=640x360:r=30:d=12", "-c:v", "libx264", "-preset", "ultrafast"])
        let script = """
            import os, pty, select, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.environ['TERM'] = 'xterm'
                os.execv(sys.argv[1], sys.argv[1:])
            seen = b''
            def wait_for(text, timeout=60):
                # A key typed before the program reads keys, or at a guessed moment, tests nothing.
                global seen
                deadline = time.monotonic() + timeout
                while text not in seen:
                    left = deadline - time.monotonic()
                    ready = left > 0 and select.select([fd], [], [], left)[0]
                    try:
                        chunk = os.read(fd, 4096) if ready else b''
                    except OSError:
                        chunk = b''
                    if not chunk:
                        sys.stdout.write(seen.decode(errors='replace'))
                        sys.exit('waited for %r in vain (%s)' % (text, 'timed out' if not ready else 'it ended'))
                    seen += chunk
            """ + "\n" + body + "\n" + Self.collectTerminalOutput
        return try run("/usr/bin/env", ["python3", "-c", script, Env.dualcam, "record", "--back", camera, "--size", "640x360",
                                        "--audio", "none", "--skip-speed-check"] + arguments)
    }

    /// Ctrl-S on the terminal stops its output: every write to it then waits until Ctrl-Q.
    /// Before, the status line was written from the recording thread, which waited with it
    /// and recorded nothing meanwhile. Now messages wait on a thread of their own: held for
    /// 6 s of a 5 s take, the file has a picture in (nearly) every slot.
    @Test(.timeLimit(.minutes(2)))
    func aTerminalStoppedWithCtrlSDoesNotStopTheRecording() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("held.mov")
        let r = try Self.recordOnTerminal(in: dir, typing: """
            wait_for(b'recording to')
            os.write(fd, b'\\x13')
            # The thing tested: the terminal held past the take's end (6 s of a 5 s take).
            time.sleep(6)
            os.write(fd, b'\\x11')
            """, ["--duration", "5", "--json", "-o", out])
        #expect(r.status == 0, "\(r.stdout)")
        let (video, _) = try Probe.packets(out, stream: "v:0")
        #expect(video.count >= 135, "\(video.count) of 150 slots have a picture")
    }

    /// `p` on the terminal pauses (the status line says so) and `p` again resumes; `q` stops.
    @Test(.timeLimit(.minutes(2)))
    func pOnTheTerminalPausesAndTheStatusLineSaysSo() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("paused.mov")
        let r = try Self.recordOnTerminal(in: dir, typing: """
            # Keys at times in the take read off the status line's clock, which stops while
            # paused: p at 1 s, p again 1.5 s later (the pause's length is the thing tested),
            # q at 3 s.
            wait_for(b'REC 0:01')
            os.write(fd, b'p')
            wait_for(b'PAUSED 0:01')
            time.sleep(1.5)
            os.write(fd, b'p')
            wait_for(b'REC 0:03')
            os.write(fd, b'q')
            """, ["-o", out])
        #expect(r.status == 0, "\(r.stdout)")
        let lines = r.stdout.components(separatedBy: "\r\u{1B}[K")
        let paused = lines.filter { $0.hasPrefix("PAUSED ") }
        #expect(!paused.isEmpty && paused.allSatisfy {
            $0.range(of: #"^PAUSED 0:0[12]  full frame: camera.mp4  p resume  q stop$"#, options: .regularExpression) != nil
        }, "\(paused)")
        #expect(lines.contains { $0.hasPrefix("REC 0:02") }, "recording again after the pause: \(r.stdout)")
        #expect(r.stdout.contains("paused at ") && r.stdout.contains("; paused 1 time, 1."), "\(r.stdout)")
        let video = try #require(Probe.number(try Probe(out).stream("video")?["duration"]))
        #expect(video > 2.2 && video < 3.4, "\(video) s of a take stopped 3 s in, paused for 1.5 s")
    }

    /// The status line on a terminal 80 and 60 columns wide, recording two cameras with sound:
    /// every redraw stays under the width (a full line wraps, and the next redraw then
    /// clears only its end), and still names the full-frame camera and the keys: at 80 in
    /// words, with the level meter; at 60 shorter. Before, the line was cut at 80 before the
    /// camera's name, and named no key.
    @Test(.timeLimit(.minutes(2)))
    func theStatusLineFitsEightyAndSixtyColumnsWithTheCameraAndTheKeys() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let back = dir.path("back.mp4"), front = dir.path("front.mp4")
        for (path, picture) in [(back, "testsrc"), (front, "testsrc2")] {
            try makeClip(path, ["-f", "lavfi", "-i", "\(picture)=s=640x360:r=30:d=6", "-f", "lavfi", "-i", "sine=f=440:d=6",
                                "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest"])
        }
        for columns in [80, 60] {
            let script = """
                import fcntl, os, pty, struct, sys, termios, time
                pid, fd = pty.fork()
                if pid == 0:
                    os.environ['TERM'] = 'xterm'
                    os.execv(sys.argv[1], sys.argv[1:])
                fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, \(columns), 0, 0))
                """ + "\n" + Self.collectTerminalOutput
            let r = try run("/usr/bin/env", ["python3", "-c", script, Env.dualcam, "record", "--back", back, "--front", front,
                                             "--audio", "back", "--size", "640x360", "--skip-speed-check", "--duration", "3",
                                             "-o", dir.path("take\(columns).mov")])
            #expect(r.status == 0, "\(r.stdout)")
            let lines = r.stdout.components(separatedBy: "\r\u{1B}[K").map { $0.components(separatedBy: "\r\n")[0] }
                .filter { $0.hasPrefix("REC ") }
            #expect(lines.count >= 4, "\(columns) columns: \(r.stdout)")
            for line in lines {
                #expect(line.count < columns, "\(columns) columns, \(line.count): \(line)")
                if columns == 80 {
                    #expect(line.range(of: #"^REC 0:0\d  \d+ fps  \[[#-]{10}\] (-?\d+ dB|silent)  full: back.mp4  "#
                                       + #"s swap  p pause  q stop$"#, options: .regularExpression) != nil, "\(line)")
                } else {
                    #expect(line.range(of: #"^REC 0:0\d  \d+ fps  (-?\d+ dB|silent)  full: back.mp4  s/p/q keys$"#,
                                       options: .regularExpression) != nil, "\(line)")
                }
            }
        }
    }

    /// `record ... &` from a shell: dualcam in a process group of its own that is not the
    /// terminal's foreground one. Before, the terminal stopped it (SIGTTOU on setting the
    /// key mode) and it never recorded; now it records, leaves the terminal's modes alone,
    /// and ends by itself. The helper reports 200 when the terminal stopped it.
    @Test(.timeLimit(.minutes(2)))
    func aRecordingStartedInTheBackgroundRecords() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("background.mov")
        let script = """
            import os, pty, signal, sys
            pid, fd = pty.fork()
            if pid == 0:
                g = os.fork()
                if g == 0:
                    os.setpgid(0, 0)
                    os.execv(sys.argv[1], sys.argv[1:])
                _, status = os.waitpid(g, os.WUNTRACED)
                if os.WIFSTOPPED(status):
                    os.kill(g, signal.SIGKILL)
                    os._exit(200)
                os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 201)
            """ + "\n" + Self.collectTerminalOutput
        let r = try run("/usr/bin/env", ["python3", "-c", script, Env.dualcam, "record", "--back", Reference.back,
                                         "--front", Reference.front, "--duration", "2", "--size", "640x360", "--audio", "none",
                                         "--skip-speed-check", "-o", out])
        #expect(r.status == 0, "exit \(r.status) (200: stopped by the terminal): \(r.stdout)")
        #expect(Probe.number(try Probe(out).stream("video")?["duration"]).map { abs($0 - 2) < 0.1 } == true)
    }

    @Test func composeRedrawsItsProgressLineInPlaceOnATerminal() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let r = try Self.onTerminal(Self.composeArguments + ["-o", dir.path("pip.mov")])
        try #require(r.status == 0, "\(r.stdout)\(r.stderr)")
        // Each redraw returns to the line's start and clears it: "\r\e[K" then the new text.
        let redraws = r.stdout.components(separatedBy: "\r\u{1B}[K").dropFirst().filter { $0.hasPrefix("composing") }
        let percents = redraws.compactMap { line -> Int? in
            guard let m = line.range(of: #"\d+ %"#, options: .regularExpression) else { return nil }
            return Int(line[m].dropLast(2).trimmingCharacters(in: .whitespaces))
        }
        #expect(percents.count >= 2, "redraws: \(redraws)")
        #expect(percents == percents.sorted() && Set(percents).count >= 2, "percent shown: \(percents)")
        #expect(redraws.allSatisfy { $0.contains("/90 frames") && $0.contains("fps") && $0.contains("ETA") })
        // The line is cleared before the summary, which stays.
        #expect(r.stdout.contains("wrote \(dir.path("pip.mov")): 90 frames"))
    }

    /// A line wider than the terminal would wrap, and the next redraw would leave its first
    /// part behind: it is cut to the width instead.
    @Test func theProgressLineFitsANarrowTerminal() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let r = try Self.onTerminal(Self.composeArguments + ["-o", dir.path("pip.mov")], columns: 30)
        try #require(r.status == 0, "\(r.stdout)")
        let redraws = r.stdout.components(separatedBy: "\r\u{1B}[K").dropFirst().filter { $0.hasPrefix("composing") }
        #expect(!redraws.isEmpty && redraws.allSatisfy { $0.count < 30 && $0.hasSuffix("…") }, "\(redraws)")
    }

    @Test func offATerminalThereIsAStartLineAndASummaryOnly() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("pip.mov")
        let r = try dualcam(Self.composeArguments + ["-o", out])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("\r") && r.stderr.isEmpty)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first == "composing \(Reference.back) + \(Reference.front) into \(out)")
        #expect(lines.last?.hasPrefix("wrote \(out): 90 frames") == true)
    }

    @Test func quietPrintsNothingOnSuccessEvenOnATerminal() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("pip.mov")
        let r = try Self.onTerminal(Self.composeArguments + ["-o", out, "--quiet"])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty && r.stderr.isEmpty, "printed: \(r.stdout.debugDescription) \(r.stderr.debugDescription)")
        #expect(FileManager.default.fileExists(atPath: out))
        // An error still gets its one line.
        let bad = try dualcam(["compose", dir.path("missing.mp4"), Reference.front, "-o", dir.path("x.mov"), "--quiet"])
        #expect(bad.status != 0 && bad.stderr.hasPrefix("dualcam: ") && bad.stderr.filter { $0 == "\n" }.count == 1)
    }

    @Test func jsonGivesTheComposeSummaryAsOneObject() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("pip.mov")
        let r = try dualcam(Self.composeArguments + ["-o", out, "--json"])
        try #require(r.status == 0, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(summary["frames"] as? Int == 90)
        #expect(summary["output"] as? String == out)
        #expect(summary["audio_source"] as? String == "back")
        #expect((summary["processing_fps"] as? Double ?? 0) > 0)
    }

    /// A recording that fails after it set the keyboard's mode (here: -o none with a preview
    /// and no display to open it on) gives the terminal its echo back: the failure is thrown
    /// up to the one place that exits, past every `defer` on the way (before, `exit` inside
    /// the command skipped them and left the shell typing blind).
    @Test(.timeLimit(.minutes(2)))
    func theTerminalEchoesAgainAfterARecordingFails() throws {
        try Env.requireFFmpegTools()
        let script = "import os, pty, sys; os.environ.pop('DISPLAY', None); os.environ.pop('WAYLAND_DISPLAY', None); "
            + "sys.exit(pty.spawn(sys.argv[1:]) >> 8)"
        let shell = "\"$0\" \"$@\"; echo \"status $?\"; stty -a"
        let r = try run("/usr/bin/env", ["python3", "-c", script, "sh", "-c", shell, Env.dualcam, "record", "--back", Reference.back,
                                         "--audio", "none", "--skip-speed-check", "--preview", "-o", "none"])
        #expect(r.stdout.contains("nowhere to show the pictures") && r.stdout.contains("status 1"), "\(r.stdout)")
        let modes = r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == ";" })
        #expect(modes.contains("echo") && modes.contains("icanon"), "the terminal was left without echo: \(r.stdout)")
    }

    /// A stream's secrets (SRT's passphrase and streamid here) are masked wherever the URL is
    /// shown: the log on the terminal, the status line, the summary and its JSON.
    @Test(.timeLimit(.minutes(2)))
    func aStreamsSecretsAreNeverShown() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let port = Int.random(in: 20000...40000)
        let url = "udp://127.0.0.1:\(port)?pkt_size=1316&passphrase=hunter2secret&streamid=streamkey42"
        let masked = "udp://127.0.0.1:\(port)?pkt_size=1316&passphrase=***&streamid=***"
        let onTerminal = try Self.recordOnTerminal(in: dir, typing: "", ["--stream", url, "--duration", "2", "-o", dir.path("t.mov")])
        #expect(onTerminal.status == 0, "\(onTerminal.stdout)")
        #expect(onTerminal.stdout.contains("REC 0:0") && onTerminal.stdout.contains("stream live"), "\(onTerminal.stdout)")
        #expect(onTerminal.stdout.contains("stream: sending to \(masked)") && onTerminal.stdout.contains("stream \(masked):"),
                "\(onTerminal.stdout)")
        let json = try dualcam(["record", "--back", Reference.back, "--audio", "none", "--skip-speed-check", "--size", "640x360",
                                "--stream", url, "--duration", "1", "--json", "-o", dir.path("j.mov")])
        #expect(json.status == 0, "\(json.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((summary?["stream"] as? [String: Any])?["url"] as? String == masked, "\(json.stdout)")
        for text in [onTerminal.stdout, json.stdout, json.stderr] {
            #expect(!text.contains("hunter2secret") && !text.contains("streamkey42"), "\(text)")
        }
    }
}
