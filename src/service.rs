//! One request, end to end: recognise, authenticate, decode, act, encode. (Stub.)
