//! The SQS data model shared by actions: payload envelope, MD5s, receipt handles.
//! (Interface stub; owned by the model work.)
