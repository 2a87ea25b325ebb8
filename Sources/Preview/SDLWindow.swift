import CSDL2
import Compositor
import Foundation

/// An SDL window with a renderer and a streaming I420 texture, owned together and freed
/// together. Every call must come from the thread that opened it.
final class SDLWindow {
    enum Event {
        case key(UInt8)
        /// A click or a tap, as fractions (0-1) of the picture's width and height.
        case press(x: Double, y: Double)
        /// The pointer or finger moved while pressed, and where it is now.
        case drag(x: Double, y: Double)
        /// Let go, and where.
        case release(x: Double, y: Double)
        case close
    }

    enum Opened {
        case success(SDLWindow)
        case failure(String)
    }

    private let window: OpaquePointer
    private let renderer: OpaquePointer
    private let texture: OpaquePointer
    let size: Size
    private var closed = false

    private init(window: OpaquePointer, renderer: OpaquePointer, texture: OpaquePointer, size: Size) {
        self.window = window
        self.renderer = renderer
        self.texture = texture
        self.size = size
    }

    /// `drivers`: SDL's video drivers to try, in order ("x11", "wayland"). Only desktop
    /// ones: SDL would otherwise fall back to taking over the console (kmsdrm) or draw
    /// nowhere (offscreen), and a missing Wayland prints its complaint on stderr.
    static func open(title: String, size: Size, drivers: [String]) -> Opened {
        // Ctrl-C and SIGTERM stay dualcam's: SDL would otherwise turn them into a quit event.
        SDL_SetHint("SDL_NO_SIGNAL_HANDLERS", "1")
        SDL_SetHint("SDL_VIDEODRIVER", drivers.joined(separator: ","))
        SDL_SetHint("SDL_RENDER_SCALE_QUALITY", "linear")
        func failure(_ what: String) -> Opened { .failure("\(what): \(String(cString: SDL_GetError()))") }
        guard SDL_Init(dc_sdl_init_video()) == 0 else { return failure("SDL cannot start its video") }
        let w = Int32(size.width), h = Int32(size.height), centred = Int32(dc_sdl_windowpos_centered())
        guard let window = SDL_CreateWindow(title, centred, centred, w, h, dc_sdl_window_resizable()) else {
            defer { SDL_Quit() }
            return failure("SDL cannot open a window")
        }
        guard let renderer = SDL_CreateRenderer(window, -1, 0) else {
            defer { SDL_DestroyWindow(window); SDL_Quit() }
            return failure("SDL cannot draw in the window")
        }
        // The picture keeps its aspect in a resized window; clicks arrive in picture pixels.
        SDL_RenderSetLogicalSize(renderer, w, h)
        guard let texture = SDL_CreateTexture(renderer, dc_sdl_pixelformat_iyuv(),
                                              Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), w, h) else {
            defer { SDL_DestroyRenderer(renderer); SDL_DestroyWindow(window); SDL_Quit() }
            return failure("SDL cannot make a texture")
        }
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        SDL_RenderClear(renderer)
        SDL_RenderPresent(renderer)
        return .success(SDLWindow(window: window, renderer: renderer, texture: texture, size: size))
    }

    /// Shows `picture`, and `outline` (in its pixels) drawn over it: where a dragged inset is.
    func show(_ picture: I420View, outline: Rect? = nil) {
        SDL_UpdateYUVTexture(texture, nil, picture.y.base, Int32(picture.y.stride), picture.u.base, Int32(picture.u.stride),
                             picture.v.base, Int32(picture.v.stride))
        SDL_RenderClear(renderer)
        SDL_RenderCopy(renderer, texture, nil, nil)
        if let outline {
            SDL_SetRenderDrawColor(renderer, 255, 255, 255, 255)
            for inset in 0..<3 {
                var r = SDL_Rect(x: Int32(outline.x + inset), y: Int32(outline.y + inset),
                                 w: Int32(max(1, outline.width - 2 * inset)), h: Int32(max(1, outline.height - 2 * inset)))
                SDL_RenderDrawRect(renderer, &r)
            }
            SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        }
        SDL_RenderPresent(renderer)
    }

    /// The next event that matters, waiting until `deadline` (monotonic seconds) at most.
    func nextEvent(until deadline: Double) -> Event? {
        var e = SDL_Event()
        while true {
            let ms = Int32(max(0, min(1000, (deadline - ProcessInfo.processInfo.systemUptime) * 1000)))
            guard SDL_WaitEventTimeout(&e, ms) == 1 else { return nil }
            switch dc_sdl_event_type(&e) {
            case SDL_QUIT.rawValue:
                return .close
            case SDL_WINDOWEVENT.rawValue where UInt32(dc_sdl_event_window_event(&e)) == SDL_WINDOWEVENT_CLOSE.rawValue:
                return .close
            case SDL_KEYDOWN.rawValue:
                let key = dc_sdl_event_key(&e)
                if key > 0 && key < 128 { return .key(UInt8(key)) }
            case SDL_MOUSEBUTTONDOWN.rawValue where dc_sdl_event_button_from_touch(&e) == 0:
                return .press(x: (Double(dc_sdl_event_button_x(&e)) + 0.5) / Double(size.width),
                              y: (Double(dc_sdl_event_button_y(&e)) + 0.5) / Double(size.height))
            case SDL_FINGERDOWN.rawValue:
                return .press(x: Double(dc_sdl_event_finger_x(&e)), y: Double(dc_sdl_event_finger_y(&e)))
            case SDL_MOUSEMOTION.rawValue where dc_sdl_event_motion_from_touch(&e) == 0 && dc_sdl_event_motion_left_held(&e) != 0:
                return .drag(x: (Double(dc_sdl_event_motion_x(&e)) + 0.5) / Double(size.width),
                             y: (Double(dc_sdl_event_motion_y(&e)) + 0.5) / Double(size.height))
            case SDL_FINGERMOTION.rawValue:
                return .drag(x: Double(dc_sdl_event_finger_x(&e)), y: Double(dc_sdl_event_finger_y(&e)))
            case SDL_MOUSEBUTTONUP.rawValue where dc_sdl_event_button_from_touch(&e) == 0:
                return .release(x: (Double(dc_sdl_event_button_x(&e)) + 0.5) / Double(size.width),
                                y: (Double(dc_sdl_event_button_y(&e)) + 0.5) / Double(size.height))
            case SDL_FINGERUP.rawValue:
                return .release(x: Double(dc_sdl_event_finger_x(&e)), y: Double(dc_sdl_event_finger_y(&e)))
            default:
                break
            }
            if ProcessInfo.processInfo.systemUptime >= deadline { return nil }
        }
    }

    func setTitle(_ title: String) { SDL_SetWindowTitle(window, title) }

    func close() {
        guard !closed else { return }
        closed = true
        SDL_DestroyTexture(texture)
        SDL_DestroyRenderer(renderer)
        SDL_DestroyWindow(window)
        SDL_Quit()
    }

    deinit { close() }
}
