//! The wire layer: recognising a request, the two codecs, the closed action table
//! and the closed error catalog. Nothing here knows what an action means.
//! (Owned by the wire-layer work; this is the interface stub.)

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    Sqs,
    Sns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// AWS JSON 1.0, recognised by `X-Amz-Target`.
    Json,
    /// Query in, XML out, recognised by the form's `Action=`.
    Query,
}
