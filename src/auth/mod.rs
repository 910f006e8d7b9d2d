//! SigV4, verified in house. (Interface stub; owned by the auth work.)
