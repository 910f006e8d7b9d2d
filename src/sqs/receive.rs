//! `ReceiveMessage`: read the input, hand the receive to the room that holds messages in
//! flight (`inflight`), answer what it delivered (`render`).
//!
//! - On a standard queue one wide pop claims up to `MaxNumberOfMessages` messages across
//!   lanes and one transaction takes them out of their lanes, each held by a visibility
//!   timer; lanes do not bound what is in flight, and a message in flight blocks nothing.
//! - On a FIFO queue sequential pops each claim a run of one group under one lease, as SQS
//!   hands out several messages of a group at once, and the group is blocked meanwhile.
//! - `WaitTimeSeconds` is the broker's long poll.
//! - `ReceiveRequestAttemptId` is accepted and ignored: a retried receive claims afresh,
//!   and the messages the lost answer held become visible again when their visibility ends.
//! - A message whose receive count exceeds the queue's `maxReceiveCount` is not returned
//!   but moved to the dead-letter queue (see `redrive`). Its slot is not refilled, so a
//!   receive may answer fewer messages than were claimable; SQS itself promises no more
//!   than "up to".

use super::inflight::{self, Asked, MAX_VISIBILITY_SECONDS};
use super::input::Input;
use super::message_attrs::SystemSelection;
use super::registry;
use super::render::{self, Shown};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};

const MAX_WAIT_SECONDS: i64 = 20;

pub async fn receive_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let max = range(
        &input,
        "MaxNumberOfMessages",
        1,
        1,
        10,
        "Must be between 1 and 10, if provided.",
    )?;
    let wait = range(
        &input,
        "WaitTimeSeconds",
        q.receive_wait_seconds() as i64,
        0,
        MAX_WAIT_SECONDS,
        "Must be >= 0 and <= 20, if provided.",
    )?;
    let visibility = range(
        &input,
        "VisibilityTimeout",
        q.visibility_timeout() as i64,
        0,
        MAX_VISIBILITY_SECONDS,
        "Must be >= 0 and <= 43200, if provided.",
    )?;
    // Accepted and not acted on (docs/divergences.md), but held to SQS's format.
    if let Some(attempt) = input.opt_str("ReceiveRequestAttemptId")? {
        super::send::check_id("ReceiveRequestAttemptId", attempt)?;
    }
    let mut system_names = input.str_list("AttributeNames")?;
    system_names.extend(input.str_list("MessageSystemAttributeNames")?);
    let selection = SystemSelection::new(system_names);
    let user_names = input.str_list("MessageAttributeNames")?;
    let shown = Shown {
        system: &selection,
        user_names: &user_names,
    };

    let asked = Asked {
        max: max as usize,
        wait_s: wait as u64,
        visibility_s: visibility as u64,
    };
    let delivered = inflight::receive(ctx, q, asked).await?;
    if delivered.is_empty() {
        return Ok(json!({}));
    }
    let out: Vec<Value> = delivered
        .into_iter()
        .map(|d| render::message(ctx, q, &shown, d))
        .collect();
    Ok(json!({ "Messages": out }))
}

/// An integer parameter within `lo..=hi`, `default` when absent.
fn range(
    input: &Input,
    name: &str,
    default: i64,
    lo: i64,
    hi: i64,
    why: &str,
) -> Result<i64, ApiError> {
    match input.opt_int(name)? {
        None => Ok(default),
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        Some(v) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter {name} is invalid. Reason: {why}"),
        )),
    }
}

/// The `VisibilityTimeout` of a visibility change: 0..=43200.
pub fn visibility_param(input: &Input) -> Result<u64, ApiError> {
    match input.opt_int("VisibilityTimeout")? {
        None => Err(super::input::missing("VisibilityTimeout")),
        Some(v) if (0..=MAX_VISIBILITY_SECONDS).contains(&v) => Ok(v as u64),
        Some(v) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided."),
        )),
    }
}
