import ArgumentParser
import Compositor
import Preview

struct PreviewOptions: ParsableArguments {
    @Flag(help: "Show the picture in a window as it is made (click the inset or press s to swap; q stops).")
    var preview = false

    /// The window, or nil (having said why in one line) when there is no display: the job
    /// goes on without it either way.
    /// `job` nil: nothing goes on without the window (the caller says so), and the line
    /// says only why there is none.
    func open(layout: PiPLayout, title: String, job: String?) -> PreviewWindow? {
        guard preview else { return nil }
        do {
            return try PreviewWindow(layout: layout, title: title)
        } catch {
            say("\(error)" + (job.map { ": \($0) goes on without it" } ?? ""))
            return nil
        }
    }
}
