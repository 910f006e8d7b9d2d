//! The SQS data model shared by actions: the payload envelope and its attributes,
//! the MD5 digests clients check, message-body validation, receipt handles and UUID text.

pub mod attrs;
pub mod body;
pub mod carried;
pub mod envelope;
pub mod handle;
pub mod md5;
pub mod sequence;
pub mod uuid;

pub use attrs::{
    attrs_from_api, attrs_to_api, AttrData, AttrFault, AttrValue, Attrs, ValueField, MAX_ATTRIBUTES,
};
pub use body::{valid_sqs_body, valid_tag_text};
pub use envelope::Envelope;
pub use handle::{mint, open, HandleError, ReceiptHandle};
pub use md5::{md5_of_body, md5_of_message_attributes};
