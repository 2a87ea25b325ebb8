import Foundation
import MediaIO
import Testing

/// A stream's secrets never show: not in dualcam's lines, not in FFmpeg's own (--verbose),
/// not in --json, not in the process list (the URL may come from a file or the environment).
@Suite(.timeLimit(.minutes(1))) struct SecretsTests {
    @Test func aPasswordWithASlashIsMaskedWhole() {
        #expect(LiveStreamWriter.masked("rtmp://user:pa/ss@host/app/key") == "rtmp://***@host/app/***")
        #expect(LiveStreamWriter.masked("srt://h:9?passphrase=abc&latency=20") == "srt://h:9?passphrase=***&latency=20")
        #expect(LiveStreamWriter.masked("rtmp://h/KEY123") == "rtmp://h/***")
        #expect(Set(LiveStreamWriter.secrets(in: "rtmp://user:pa/ss@host/app/key")) == ["user:pa/ss", "pa/ss", "key"])
    }

    /// A secret key's value wherever it stands (an attacker's `srt://h:9&passphrase=` and
    /// `;passphrase=` showed it in full), and a scheme without its // refused unechoed.
    @Test func secretsOutsideAQueryAndSchemesWithoutSlashes() throws {
        Secrets.register(url: "srt://127.0.0.1:9&passphrase=AmpPass123")
        Secrets.register(url: "srt://127.0.0.1:9;passphrase=SemiPass123")
        let shown = Secrets.masked("srt://127.0.0.1:9&passphrase=AmpPass123 and srt://127.0.0.1:9;passphrase=SemiPass123")
        #expect(!shown.contains("AmpPass123") && !shown.contains("SemiPass123"), "\(shown)")
        let r = try dualcam(["record", "--back", Reference.back, "--duration", "1", "-o", "none", "--stream",
                             "rtmp:/bob:TypoPw11@127.0.0.1:1/app/TYPOKEY11"])
        #expect(r.status == 64 && !r.stderr.contains("TypoPw11") && !r.stderr.contains("TYPOKEY11")
                && r.stderr.contains("a URL's scheme is followed by ://"), "\(r.stderr)")
    }

    @Test func knownSecretsAreMaskedWhereverTheyShow() throws {
        Secrets.register(url: "srt://h:9?passphrase=Sup3rSecretPass&streamid=room%2F7")
        let line = "[srt @ 0x1] passphrase Sup3rSecretPass rejected by srt://h:9?passphrase=Sup3rSecretPass: stream room/7 failed"
        let shown = Secrets.masked(line)
        #expect(!shown.contains("Sup3rSecretPass") && !shown.contains("room/7") && shown.hasSuffix(": stream *** failed"), "\(shown)")
        // A URL inside a JSON string: masked, the JSON still whole.
        let json = Secrets.masked(#"{"url":"rtmp://u:Other1@host/live/Key9","n":1}"#)
        #expect(json == #"{"url":"rtmp://***@host/live/***","n":1}"#, "\(json)")
        #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) is [String: Any])
    }
}

extension RecordTests {
    /// The URL from the environment and from a file: neither the passphrase nor the URL is
    /// in the process's arguments, and with --verbose (FFmpeg's own lines too) and --json no
    /// line shows the passphrase.
    @Test(.timeLimit(.minutes(2)))
    func aStreamsPassphraseIsInNoLineAndNotInTheProcessList() throws {
        let dir = try TempDir()
        let secret = "Pass-\(UUID().uuidString.prefix(8))"
        let url = "srt://127.0.0.1:9?passphrase=\(secret)&pbkeylen=16"
        try url.write(toFile: dir.path("stream.url"), atomically: true, encoding: .utf8)
        for given in ["env:DUALCAM_TEST_STREAM", "@" + dir.path("stream.url")] {
            var arguments: [String] = []
            let r = try run(Env.dualcam, ["record", "--back", Reference.back, "--duration", "2", "--audio", "none", "--size", "320x180",
                                          "--codec", "h264", "--skip-speed-check", "--verbose", "--json", "--stream", given,
                                          "-o", dir.path("take.mov"), "--overwrite"],
                            environment: ["DUALCAM_TEST_STREAM": url], whileRunning: { p, said in
                // Read while it records and streams, the stream's address long since resolved.
                said.waitFor("recording to")
                let raw = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(p.processIdentifier)/cmdline"))) ?? Data()
                arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            })
            #expect(r.status == 0, "\(given): \(r.stderr)")
            #expect(arguments.contains(given) && !arguments.joined(separator: " ").contains(secret), "\(arguments)")
            #expect(r.stderr.contains("[srt @") || r.stderr.contains("stream: cannot connect"), "\(given): nothing about the stream: \(r.stderr)")
            #expect(!r.stderr.contains(secret) && !r.stdout.contains(secret), "\(given): \(r.stderr) \(r.stdout)")
            #expect(r.stdout.contains("passphrase=***"), "\(r.stdout)")
        }
        // A file that holds no URL (a wrong file, a bare key) is refused without being shown.
        try "root:NotAURL-\(secret)\n".write(toFile: dir.path("wrong.txt"), atomically: true, encoding: .utf8)
        let wrong = try dualcam(["record", "--back", Reference.back, "--stream", "@" + dir.path("wrong.txt"), "-o", dir.path("w.mov")])
        #expect(wrong.status == 64 && wrong.stderr.contains("its first line is not a URL") && !wrong.stderr.contains(secret), "\(wrong.stderr)")
    }
}
