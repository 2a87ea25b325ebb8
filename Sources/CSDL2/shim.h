#ifndef DUALCAM_CSDL2_SHIM_H
#define DUALCAM_CSDL2_SHIM_H
#include <SDL2/SDL.h>

/* Macros and unions Swift cannot use directly. */
static inline Uint32 dc_sdl_init_video(void) { return SDL_INIT_VIDEO; }
static inline Uint32 dc_sdl_window_resizable(void) { return SDL_WINDOW_RESIZABLE; }
static inline int dc_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }
static inline Uint32 dc_sdl_pixelformat_iyuv(void) { return SDL_PIXELFORMAT_IYUV; }
static inline Uint32 dc_sdl_event_type(const SDL_Event *e) { return e->type; }
static inline SDL_Keycode dc_sdl_event_key(const SDL_Event *e) { return e->key.keysym.sym; }
static inline Uint8 dc_sdl_event_window_event(const SDL_Event *e) { return e->window.event; }
static inline Sint32 dc_sdl_event_button_x(const SDL_Event *e) { return e->button.x; }
static inline Sint32 dc_sdl_event_button_y(const SDL_Event *e) { return e->button.y; }
static inline float dc_sdl_event_finger_x(const SDL_Event *e) { return e->tfinger.x; }
static inline float dc_sdl_event_finger_y(const SDL_Event *e) { return e->tfinger.y; }
static inline Sint32 dc_sdl_event_motion_x(const SDL_Event *e) { return e->motion.x; }
static inline Sint32 dc_sdl_event_motion_y(const SDL_Event *e) { return e->motion.y; }
static inline int dc_sdl_event_motion_from_touch(const SDL_Event *e) { return e->motion.which == SDL_TOUCH_MOUSEID; }
/* Whether the left button is held during a motion: a drag, not a hover. */
static inline int dc_sdl_event_motion_left_held(const SDL_Event *e) { return (e->motion.state & SDL_BUTTON_LMASK) != 0; }
/* A click SDL made up from a touch: the touch itself is handled, not this copy of it. */
static inline int dc_sdl_event_button_from_touch(const SDL_Event *e) { return e->button.which == SDL_TOUCH_MOUSEID; }
#endif
