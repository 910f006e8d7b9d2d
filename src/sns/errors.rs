//! SNS's spellings of the errors its actions answer, and broker failures in SNS's dialect.

use crate::model::AttrFault;
use crate::queen::QueenError;
use crate::wire::{ApiError, ErrorCode};

/// `InvalidParameter` with AWS's `Invalid parameter: ...` prefix.
pub fn invalid(what: impl AsRef<str>) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidParameter,
        format!("Invalid parameter: {}", what.as_ref()),
    )
}

/// `Invalid parameter: <name> Reason: <reason>`.
pub fn invalid_because(name: &str, reason: impl AsRef<str>) -> ApiError {
    invalid(format!("{name} Reason: {}", reason.as_ref()))
}

/// An ARN parameter that names nothing of ours. SNS says why when the ARN has fewer than
/// the six `:`-separated elements every ARN has, and only the parameter otherwise.
pub fn bad_arn(param: &str, arn: &str) -> ApiError {
    match arn.split(':').count() {
        n if n < 6 => invalid_because(
            param,
            format!("An ARN must have at least 6 elements, not {n}"),
        ),
        // Six elements and no subscription id after them (the seventh).
        _ if param == "SubscriptionArn" => invalid("SubscriptionId"),
        _ => invalid(param),
    }
}

/// A refused message attribute in SNS's words, as recorded against it
/// (test_empty_or_wrong_message_attributes); where SNS's words are not recorded, SQS's.
/// `entry` is a `PublishBatch` entry's position (from 1): a missing `DataType` is SNS's
/// request validation, which names the member's path.
pub fn attribute(fault: &AttrFault, entry: Option<usize>) -> ApiError {
    use AttrFault::*;
    let bad = |m: String| ApiError::new(ErrorCode::SnsInvalidParameterValue, m);
    match fault {
        NoDataType(name) => {
            let within = entry.map_or(String::new(), |i| {
                format!("publishBatchRequestEntries.{i}.member.")
            });
            ApiError::new(
                ErrorCode::ValidationError,
                format!("1 validation error detected: Value null at '{within}messageAttributes.{name}.member.dataType' failed to satisfy constraint: Member must not be null"),
            )
        }
        EmptyValue { name, data_type } => bad(format!(
            "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{data_type}'."
        )),
        WrongField { name, data_type, want } => bad(format!(
            "The message attribute '{name}' with type '{data_type}' must use field '{}'.",
            want.short()
        )),
        NameTooLong(_) => bad("Length of message attribute name must be less than 256 bytes.".into()),
        NameCharacter(_, c) => bad(format!(
            "Invalid non-alphanumeric character '#x{:X}' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.",
            u32::from(*c)
        )),
        NameStartsWithPeriod(_) => {
            bad("Invalid message attribute name starting with character '.' was found.".into())
        }
        NameEndsWithPeriod(_) => {
            bad("Invalid message attribute name ending with character '.' was found.".into())
        }
        NameSuccessivePeriods(_) => {
            bad("Message attribute name can not have successive '.' character.".into())
        }
        other => bad(other.to_string()),
    }
}

pub fn topic_not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "Topic does not exist")
}

pub fn subscription_not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "Subscription does not exist")
}

pub fn resource_not_found() -> ApiError {
    ApiError::new(ErrorCode::ResourceNotFound, "Resource does not exist")
}

/// A broker failure as SNS would answer it: throttling is `Throttled` (on every SDK's
/// throttling list), an unreachable broker `ServiceUnavailable`, anything else SNS's
/// `InternalError`.
pub fn broker(e: QueenError) -> ApiError {
    match e {
        QueenError::Throttled { .. } => ApiError::new(ErrorCode::Throttled, "Rate exceeded"),
        QueenError::Unavailable(_) => ApiError::new(
            ErrorCode::ServiceUnavailable,
            "The request has failed due to a temporary failure of the server.",
        ),
        QueenError::Failed { .. } | QueenError::BadAnswer(_) => internal(),
    }
}

pub fn internal() -> ApiError {
    ApiError::new(
        ErrorCode::SnsInternalError,
        "The request processing has failed because of an unknown error, exception or failure.",
    )
}

/// The SQS-flavoured codes a shared helper may answer, in SNS's dialect (the dispatch
/// applies this to every SNS answer, so nothing SQS-shaped leaks through).
pub fn sns_flavour(e: ApiError) -> ApiError {
    match e.code {
        ErrorCode::RequestThrottled => ApiError::new(ErrorCode::Throttled, e.message),
        ErrorCode::InternalError => ApiError::new(ErrorCode::SnsInternalError, e.message),
        ErrorCode::InvalidParameterValue | ErrorCode::MissingParameter => {
            ApiError::new(ErrorCode::InvalidParameter, e.message)
        }
        _ => e,
    }
}
