#!/usr/bin/env python3
"""Asks an X11 window to close, as a window manager's close button does: a WM_DELETE_WINDOW
client message (xdotool's windowclose destroys the window instead, which no user does).
Usage: close-window.py WINDOW_ID   (DISPLAY must be set)"""
import ctypes, sys

x11 = ctypes.CDLL("libX11.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XInternAtom.restype = ctypes.c_ulong
x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x11.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
x11.XFlush.argtypes = [ctypes.c_void_p]
x11.XCloseDisplay.argtypes = [ctypes.c_void_p]


class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5), ("pad", ctypes.c_char * 96)]


display = x11.XOpenDisplay(None)
if not display:
    sys.exit("close-window: cannot open the display")
window = int(sys.argv[1])
event = ClientMessage(type=33, send_event=1, display=display, window=window,  # 33: ClientMessage
                      message_type=x11.XInternAtom(display, b"WM_PROTOCOLS", 0), format=32)
event.data[0] = x11.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
if not x11.XSendEvent(display, window, 0, 0, ctypes.byref(event)):
    sys.exit("close-window: XSendEvent failed")
x11.XFlush(display)
x11.XCloseDisplay(display)
