//! The closed error catalog. Every code is a real AWS code with AWS's own status; an action
//! can only name a variant, never spell a code, because SDK retry and exception classes are
//! keyed off these strings.

use super::Service;

/// Where a code's facts come from (and what the catalog test checks it against).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An exception shape of SQS's model. Current botocore keeps the shape name only; the
    /// legacy code and status are the query-era model's (botocore 1.31.60), and shapes added
    /// after it carry the shape name as code and SQS's documented 400.
    Sqs,
    /// An exception shape of SNS's model, with its `error` code/status/senderFault.
    Sns,
    /// One of AWS's common (protocol-level) errors, in no service model.
    Common,
}

/// What a variant renders as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The model's shape name: the JSON `__type` suffix (and `QueryErrorCode` in botocore).
    pub shape: &'static str,
    /// The Query `<Code>` and the head of `x-amzn-query-error`.
    pub code: &'static str,
    pub status: u16,
    pub sender: bool,
    pub origin: Origin,
}

macro_rules! catalog {
    ($($(#[$doc:meta])* $variant:ident => ($origin:ident, $shape:literal, $code:literal, $status:literal, $fault:ident)),+ $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($(#[$doc])* $variant),+ }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            pub fn spec(self) -> Spec {
                match self {
                    $(ErrorCode::$variant => Spec {
                        shape: $shape,
                        code: $code,
                        status: $status,
                        sender: catalog!(@fault $fault),
                        origin: Origin::$origin,
                    }),+
                }
            }
        }
    };
    (@fault Sender) => { true };
    (@fault Receiver) => { false };
}

catalog! {
    // --- SQS's modelled exceptions: shape name, then legacy code. ---
    QueueDoesNotExist => (Sqs, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", 400, Sender),
    QueueNameExists => (Sqs, "QueueNameExists", "QueueAlreadyExists", 400, Sender),
    QueueDeletedRecently => (Sqs, "QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently", 400, Sender),
    BatchEntryIdsNotDistinct => (Sqs, "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, Sender),
    EmptyBatchRequest => (Sqs, "EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", 400, Sender),
    TooManyEntriesInBatchRequest => (Sqs, "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400, Sender),
    InvalidBatchEntryId => (Sqs, "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", 400, Sender),
    BatchRequestTooLong => (Sqs, "BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", 400, Sender),
    ReceiptHandleIsInvalid => (Sqs, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 400, Sender),
    InvalidAttributeName => (Sqs, "InvalidAttributeName", "InvalidAttributeName", 400, Sender),
    InvalidAttributeValue => (Sqs, "InvalidAttributeValue", "InvalidAttributeValue", 400, Sender),
    InvalidMessageContents => (Sqs, "InvalidMessageContents", "InvalidMessageContents", 400, Sender),
    MessageNotInflight => (Sqs, "MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", 400, Sender),
    PurgeQueueInProgress => (Sqs, "PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress", 403, Sender),
    OverLimit => (Sqs, "OverLimit", "OverLimit", 403, Sender),
    RequestThrottled => (Sqs, "RequestThrottled", "RequestThrottled", 400, Sender),
    UnsupportedOperation => (Sqs, "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", 400, Sender),
    ResourceNotFoundException => (Sqs, "ResourceNotFoundException", "ResourceNotFoundException", 404, Sender),
    InvalidSecurity => (Sqs, "InvalidSecurity", "InvalidSecurity", 400, Sender),
    InvalidAddress => (Sqs, "InvalidAddress", "InvalidAddress", 400, Sender),

    // --- AWS's common errors, answered by both services. ---
    /// SQS over JSON names it `InvalidParameterValueException` in `__type` (recorded against
    /// AWS; botocore's `QueryErrorCode`), the query code in `x-amzn-query-error`.
    InvalidParameterValue => (Common, "InvalidParameterValueException", "InvalidParameterValue", 400, Sender),
    /// Likewise `MissingRequiredParameterException` in SQS's JSON `__type`.
    MissingParameter => (Common, "MissingRequiredParameterException", "MissingParameter", 400, Sender),
    InvalidAction => (Common, "InvalidAction", "InvalidAction", 400, Sender),
    MissingAction => (Common, "MissingAction", "MissingAction", 400, Sender),
    InvalidClientTokenId => (Common, "InvalidClientTokenId", "InvalidClientTokenId", 403, Sender),
    SignatureDoesNotMatch => (Common, "SignatureDoesNotMatch", "SignatureDoesNotMatch", 403, Sender),
    IncompleteSignature => (Common, "IncompleteSignature", "IncompleteSignature", 400, Sender),
    MissingAuthenticationToken => (Common, "MissingAuthenticationToken", "MissingAuthenticationToken", 403, Sender),
    RequestExpired => (Common, "RequestExpired", "RequestExpired", 400, Sender),
    AccessDenied => (Common, "AccessDenied", "AccessDenied", 403, Sender),
    InternalError => (Common, "InternalError", "InternalError", 500, Receiver),
    ServiceUnavailable => (Common, "ServiceUnavailable", "ServiceUnavailable", 503, Receiver),
    /// A GET that names no action: what AWS's front end answers (404), with the error
    /// document's root named after it.
    UnknownOperation => (Common, "UnknownOperationException", "UnknownOperationException", 404, Sender),
    /// The listener's 2 MiB body cap (AWS front ends answer an oversized body 413).
    RequestEntityTooLarge => (Common, "RequestEntityTooLarge", "RequestEntityTooLarge", 413, Sender),
    /// A JSON 1.0 body that is not valid UTF-8 JSON, or not an object: what AWS JSON
    /// services (SQS included) answer for a body they cannot deserialize.
    SerializationException => (Common, "SerializationException", "SerializationException", 400, Sender),
    /// A request that fails a member constraint (`1 validation error detected: ...`), as
    /// SNS answers a message attribute without a `DataType` (recorded).
    ValidationError => (Common, "ValidationError", "ValidationError", 400, Sender),
    /// A Query form that cannot be decoded (bad percent-escape, invalid UTF-8). AWS documents
    /// this code with HTTP 404 for both SQS and SNS, odd as that is.
    MalformedQueryString => (Common, "MalformedQueryString", "MalformedQueryString", 404, Sender),

    // --- SNS's modelled exceptions: shape name, then SNS's own code. ---
    NotFound => (Sns, "NotFoundException", "NotFound", 404, Sender),
    InvalidParameter => (Sns, "InvalidParameterException", "InvalidParameter", 400, Sender),
    /// SNS's own spelling of a bad parameter value (`ParameterValueInvalid`).
    SnsInvalidParameterValue => (Sns, "InvalidParameterValueException", "ParameterValueInvalid", 400, Sender),
    AuthorizationError => (Sns, "AuthorizationErrorException", "AuthorizationError", 403, Sender),
    ResourceNotFound => (Sns, "ResourceNotFoundException", "ResourceNotFound", 404, Sender),
    TagLimitExceeded => (Sns, "TagLimitExceededException", "TagLimitExceeded", 400, Sender),
    TagPolicy => (Sns, "TagPolicyException", "TagPolicy", 400, Sender),
    StaleTag => (Sns, "StaleTagException", "StaleTag", 400, Sender),
    ConcurrentAccess => (Sns, "ConcurrentAccessException", "ConcurrentAccess", 400, Sender),
    SnsInternalError => (Sns, "InternalErrorException", "InternalError", 500, Receiver),
    Throttled => (Sns, "ThrottledException", "Throttled", 429, Sender),
    FilterPolicyLimitExceeded => (Sns, "FilterPolicyLimitExceededException", "FilterPolicyLimitExceeded", 403, Sender),
    SubscriptionLimitExceeded => (Sns, "SubscriptionLimitExceededException", "SubscriptionLimitExceeded", 403, Sender),
    TopicLimitExceeded => (Sns, "TopicLimitExceededException", "TopicLimitExceeded", 403, Sender),
    ValidationException => (Sns, "ValidationException", "ValidationException", 400, Sender),
    SnsInvalidSecurity => (Sns, "InvalidSecurityException", "InvalidSecurity", 403, Sender),
    SnsBatchEntryIdsNotDistinct => (Sns, "BatchEntryIdsNotDistinctException", "BatchEntryIdsNotDistinct", 400, Sender),
    SnsEmptyBatchRequest => (Sns, "EmptyBatchRequestException", "EmptyBatchRequest", 400, Sender),
    SnsTooManyEntriesInBatchRequest => (Sns, "TooManyEntriesInBatchRequestException", "TooManyEntriesInBatchRequest", 400, Sender),
    SnsInvalidBatchEntryId => (Sns, "InvalidBatchEntryIdException", "InvalidBatchEntryId", 400, Sender),
    SnsBatchRequestTooLong => (Sns, "BatchRequestTooLongException", "BatchRequestTooLong", 400, Sender),
}

impl ErrorCode {
    pub fn status(self) -> u16 {
        self.spec().status
    }

    pub fn is_sender_fault(self) -> bool {
        self.spec().sender
    }

    /// The Query `<Code>`; for SQS the legacy spelling (`AWS.SimpleQueueService.NonExistentQueue`).
    pub fn code(self) -> &'static str {
        self.spec().code
    }

    /// The shape name: the JSON `__type` suffix.
    pub fn shape(self) -> &'static str {
        self.spec().shape
    }

    /// What AWS puts in a batch result's `BatchResultErrorEntry.Code` for this failure:
    /// the Query-era code string, in both protocols (it is data, not an error envelope).
    pub fn batch_entry_code(self) -> &'static str {
        self.spec().code
    }

    /// `Sender` or `Receiver`, as the Query `<Type>` and the `x-amzn-query-error` tail.
    pub fn fault(self) -> &'static str {
        if self.is_sender_fault() {
            "Sender"
        } else {
            "Receiver"
        }
    }

    /// The namespace of the JSON `__type`.
    pub fn json_type_prefix(self, service: Service) -> &'static str {
        match (self, self.spec().origin, service) {
            // Raised by the JSON framework itself, before any service code runs.
            (ErrorCode::SerializationException, _, _) => "com.amazon.coral.service#",
            (_, Origin::Sqs, _) => "com.amazonaws.sqs#",
            (_, Origin::Sns, _) => "com.amazonaws.sns#",
            (_, Origin::Common, Service::Sqs) => "com.amazonaws.sqs#",
            (_, Origin::Common, Service::Sns) => "com.amazonaws.sns#",
        }
    }
}

/// An error an action or a layer answers: a catalog code plus a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

/// Messages SQS's Query front end words differently from its JSON one, as recorded
/// against AWS: (code, the JSON wording, the Query wording).
const SQS_QUERY_WORDING: &[(ErrorCode, &str, &str)] = &[(
    ErrorCode::QueueDoesNotExist,
    "The specified queue does not exist.",
    "The specified queue does not exist for this wsdl version.",
)];

impl ApiError {
    /// The message as SQS's Query protocol words it (the same text unless the table says).
    pub fn sqs_query_message(&self) -> &str {
        SQS_QUERY_WORDING
            .iter()
            .find(|(code, json, _)| *code == self.code && *json == self.message)
            .map_or(self.message.as_str(), |(_, _, query)| query)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.code(), self.message)
    }
}

impl std::error::Error for ApiError {}
