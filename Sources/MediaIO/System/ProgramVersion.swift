/// This release, for `--version` and every JSON output (`dualcam` and `dualcam-bench`).
/// Bumped by hand with each tagged version.
public let dualcamVersion = "0.9.0"
