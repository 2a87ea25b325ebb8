import Compositor

/// Something of another module that shows the composed picture while it is made (the
/// preview window): registered as an output through `OutputRequest.preview`. It is offered
/// every composed frame on the composing thread, takes what it wants (a copy at its own size
/// and rate) and returns at once: it must never cost the encoder its real time.
public protocol PictureObserver: AnyObject, Sendable {
    func offer(_ picture: I420View)
}
