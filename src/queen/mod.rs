//! The Queen client: the only code that knows broker routes. (Stub.)
