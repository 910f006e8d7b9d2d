//! One call of the delivery route: take up to ten POSTs from the outbox, make them at once,
//! and settle each. A 2xx within 15 s is a delivery and deletes the POST; anything else is
//! a failure, after which the POST becomes visible again when the delivery policy's delay
//! for that retry ends (the outbox message's receive count is the attempt's number). After
//! the last retry a notification goes to the subscription's dead-letter queue when it has
//! one, and is dropped otherwise. A POST whose subscription is gone, or a notification
//! for one still pending, is dropped, as SNS delivers nothing to either.
//!
//! A subscription whose policy sets `maxReceivesPerSecond` gets at most that many
//! notifications a second, counted in the broker's KV across replicas (one counter per
//! subscription and second); a POST over the pace waits a second and is not counted as an
//! attempt (its deferrals are counted beside it).
//!
//! A worker that dies mid-POST settles nothing: the POST is taken again once its
//! visibility ([`TAKE_VISIBILITY_S`]) ends. So delivery is at least once, as SNS's is.

use super::endpoint;
use super::outbox::{self, Job, Kind};
use super::policy::{self, RetryPolicy};
use crate::ctx::Ctx;
use crate::http::{OutsideRequest, Transport};
use crate::model::Envelope;
use crate::queen::KvOp;
use crate::sns::arn::{subscription_arn, topic_arn};
use crate::sns::errors::broker;
use crate::sns::records::{load_sub, sub_recent, topic_recent, SubRecord};
use crate::sqs::inflight::{self, Asked, Delivery};
use crate::sqs::lanes::{message_key, push_item};
use crate::sqs::naming::name_from_arn;
use crate::sqs::registry::{self, QueueRecord};
use crate::wire::ApiError;
use futures_util::future::join_all;
use serde::Serialize;

/// SNS counts a 2xx answered within 15 seconds as delivered.
const ANSWER_TIMEOUT_MS: u64 = 15_000;
/// How long a taken POST is hidden from other workers: longer than a POST may take.
pub const TAKE_VISIBILITY_S: u64 = 60;
/// POSTs made at once by one call.
const TAKE_AT_ONCE: usize = 10;
/// The longest a call waits for a POST to arrive in an empty outbox.
pub const MAX_WAIT_S: u64 = 5;

/// What one call did, as the route answers it.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct Worked {
    pub delivered: u32,
    pub retrying: u32,
    /// Held back a second by the subscription's `maxReceivesPerSecond`.
    pub paced: u32,
    pub dead_lettered: u32,
    pub dropped: u32,
    /// POSTs made whose settling failed (the broker): each is taken again later.
    pub unsettled: u32,
}

impl Worked {
    /// How many POSTs the call took from the outbox.
    pub fn taken(&self) -> u32 {
        self.delivered + self.retrying + self.dead_lettered + self.dropped + self.unsettled
    }
}

enum Settled {
    Delivered,
    Retrying,
    Paced,
    DeadLettered,
    Dropped,
}

/// One call: takes up to ten POSTs, waiting up to `wait_s` (at most [`MAX_WAIT_S`]) for
/// one to arrive, as a long poll; makes them; settles each.
pub async fn work<T: Transport>(ctx: &Ctx<'_, T>, wait_s: u64) -> Result<Worked, ApiError> {
    let taken = take(ctx, wait_s).await?;
    Ok(make(ctx, taken).await)
}

/// The POSTs of one call, taken from the outbox and not yet made.
pub struct Taken(Vec<Delivery>);

impl Taken {
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Takes up to ten POSTs, waiting up to `wait_s` (at most [`MAX_WAIT_S`]) for one.
pub async fn take<T: Transport>(ctx: &Ctx<'_, T>, wait_s: u64) -> Result<Taken, ApiError> {
    let asked = Asked {
        max: TAKE_AT_ONCE,
        wait_s: wait_s.min(MAX_WAIT_S),
        visibility_s: TAKE_VISIBILITY_S,
    };
    Ok(Taken(
        inflight::receive(ctx, &outbox::record(), asked).await?,
    ))
}

/// Makes the POSTs taken, all at once, settling each as it is answered.
pub async fn make<T: Transport>(ctx: &Ctx<'_, T>, taken: Taken) -> Worked {
    let q = outbox::record();
    let settled = join_all(taken.0.into_iter().map(|d| post_and_settle(ctx, &q, d))).await;
    let mut worked = Worked::default();
    for s in settled {
        match s {
            Ok(Settled::Delivered) => worked.delivered += 1,
            Ok(Settled::Retrying) => worked.retrying += 1,
            Ok(Settled::Paced) => worked.paced += 1,
            Ok(Settled::DeadLettered) => worked.dead_lettered += 1,
            Ok(Settled::Dropped) => worked.dropped += 1,
            Err(_) => worked.unsettled += 1,
        }
    }
    worked
}

async fn post_and_settle<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    d: Delivery,
) -> Result<Settled, ApiError> {
    let Some(job) = Job::read(&d.envelope) else {
        return drop_it(ctx, q, &d).await;
    };
    let wants = |s: &SubRecord| {
        s.is_webhook()
            && match job.kind {
                Kind::Notification => !s.pending,
                Kind::SubscriptionConfirmation => s.pending,
                Kind::UnsubscribeConfirmation => true,
            }
    };
    let wanted = match &job.gone {
        // Removed already: the endpoint it had is the one told.
        Some(gone) if job.kind == Kind::UnsubscribeConfirmation => Some(gone.clone()),
        _ => match sub_recent(ctx, &job.topic, &job.sub)
            .await?
            .filter(|s| wants(s))
        {
            Some(s) => Some(s),
            // A cached record may be older than the job (confirmed through another
            // replica a moment ago): a POST is dropped only on what the broker says now.
            None => load_sub(ctx, &job.topic, &job.sub)
                .await?
                .map(|v| v.record)
                .filter(|s| wants(s)),
        },
    };
    let Some(sub) = wanted else {
        return drop_it(ctx, q, &d).await;
    };
    let topic = topic_recent(ctx, &job.topic).await?;
    let topic_policy = topic.as_ref().and_then(|t| t.attr("DeliveryPolicy"));
    let sub_policy = sub.attr("DeliveryPolicy");
    let mut deferrals = 0;
    if let Some(rate) =
        policy::max_per_second(topic_policy, sub_policy).filter(|_| job.kind == Kind::Notification)
    {
        match pace(ctx, &sub, &d, rate).await? {
            Pace::Go { deferred } => deferrals = deferred,
            Pace::Wait => return wait_a_second(ctx, q, &d).await,
        }
    }
    let content_type = policy::content_type(topic_policy, sub_policy);
    if post(ctx, &sub, &job, content_type).await {
        inflight::delete(ctx, q, std::slice::from_ref(&d.handle)).await?;
        return Ok(Settled::Delivered);
    }
    let policy = RetryPolicy::effective(topic_policy, sub_policy);
    // Receives of this POST that were held back by the pace are not attempts.
    if let Some(delay) = policy.delay_before(d.count.saturating_sub(deferrals)) {
        let changed = inflight::change(ctx, q, &[(d.handle.clone(), u64::from(delay))]).await;
        return match changed.into_iter().next() {
            Some(Err(e)) => Err(e),
            _ => Ok(Settled::Retrying),
        };
    }
    let moved = job.kind == Kind::Notification && dead_letter(ctx, &sub, &job).await?;
    inflight::delete(ctx, q, std::slice::from_ref(&d.handle)).await?;
    Ok(if moved {
        Settled::DeadLettered
    } else {
        Settled::Dropped
    })
}

/// Whether a POST may be made within its subscription's pace.
enum Pace {
    /// Within it; the POST was held back `deferred` times before.
    Go {
        deferred: u32,
    },
    Wait,
}

/// The subscription's counter for this second, raised if it stays within `rate` (and the
/// POST's deferrals, read in the same call).
async fn pace<T: Transport>(
    ctx: &Ctx<'_, T>,
    sub: &SubRecord,
    d: &Delivery,
    rate: u32,
) -> Result<Pace, ApiError> {
    let second = ctx.now_ms.div_euclid(1000);
    let ops = vec![
        KvOp::incr(rate_key(sub, second), 1, Some(i64::from(rate)), 2),
        KvOp::get(deferrals_key(d)),
    ];
    let r = ctx.queen.kv_results(ops).await.map_err(broker)?;
    if !r.first().is_some_and(|r| r.applied()) {
        return Ok(Pace::Wait);
    }
    let deferred = r
        .get(1)
        .and_then(|r| r.row())
        .and_then(|row| row.value.as_u64())
        .unwrap_or(0);
    Ok(Pace::Go {
        deferred: deferred.min(u64::from(u32::MAX)) as u32,
    })
}

fn rate_key(sub: &SubRecord, second: i64) -> String {
    format!("qs:sns:pace:{}:{}:{second}", sub.topic, sub.id)
}

fn deferrals_key(d: &Delivery) -> String {
    format!("qs:sns:paced:{}", d.message_id)
}

/// Over the pace: counted as a deferral and shown again in a second.
async fn wait_a_second<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    d: &Delivery,
) -> Result<Settled, ApiError> {
    let count = KvOp::incr(deferrals_key(d), 1, None, q.retention_seconds());
    ctx.queen.kv_results(vec![count]).await.map_err(broker)?;
    let changed = inflight::change(ctx, q, &[(d.handle.clone(), 1)]).await;
    match changed.into_iter().next() {
        Some(Err(e)) => Err(e),
        _ => Ok(Settled::Paced),
    }
}

async fn drop_it<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    d: &Delivery,
) -> Result<Settled, ApiError> {
    inflight::delete(ctx, q, std::slice::from_ref(&d.handle)).await?;
    Ok(Settled::Dropped)
}

/// Makes the POST; true when the subscriber answered 2xx in time. A host no longer
/// allowed (the operator narrowed the list since the subscription was made) is not called.
async fn post<T: Transport>(
    ctx: &Ctx<'_, T>,
    sub: &SubRecord,
    job: &Job,
    content_type: String,
) -> bool {
    let allowed = endpoint::host_of(&sub.endpoint, &sub.protocol)
        .is_some_and(|host| endpoint::allowed(ctx.cfg, &host));
    if !allowed {
        return false;
    }
    let mut headers = vec![
        ("content-type", content_type),
        ("x-amz-sns-message-type", job.kind.as_str().to_string()),
        ("x-amz-sns-message-id", job.message_id.clone()),
        ("x-amz-sns-topic-arn", topic_arn(ctx.cfg, &job.topic)),
        (
            "user-agent",
            "Amazon Simple Notification Service Agent".to_string(),
        ),
    ];
    if job.kind == Kind::Notification {
        let arn = subscription_arn(ctx.cfg, &sub.topic, &sub.id);
        headers.push(("x-amz-sns-subscription-arn", arn));
    }
    if job.raw {
        headers.push(("x-amz-sns-rawdelivery", "true".to_string()));
    }
    let req = OutsideRequest {
        method: "POST",
        url: sub.endpoint.clone(),
        headers: headers
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        body: job.body.clone().into_bytes(),
        timeout_ms: ANSWER_TIMEOUT_MS,
    };
    let answered = ctx.queen.transport().call_outside(req).await;
    answered.is_ok_and(|r| (200..300).contains(&r.status))
}

/// Sends what could not be delivered to the subscription's dead-letter queue (a standard
/// SQS queue of this endpoint): the body the POSTs carried. False when there is none to
/// send to (no `RedrivePolicy`, the queue gone, or a FIFO queue, which a notification of a
/// standard topic cannot enter without a group).
async fn dead_letter<T: Transport>(
    ctx: &Ctx<'_, T>,
    sub: &SubRecord,
    job: &Job,
) -> Result<bool, ApiError> {
    let target = sub
        .attr("RedrivePolicy")
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|p| p.get("deadLetterTargetArn")?.as_str().map(str::to_string));
    let Some(name) = target
        .as_deref()
        .and_then(|arn| name_from_arn(ctx.cfg, arn))
    else {
        return Ok(false);
    };
    let Some(queue) = registry::load(ctx, name).await?.map(|s| s.record) else {
        return Ok(false);
    };
    if queue.fifo {
        return Ok(false);
    }
    let envelope = Envelope {
        body: job.body.clone(),
        ..Envelope::default()
    };
    let key = message_key(&job.message_id, 0);
    let push = push_item(&queue, envelope.to_json(), None, None, &key);
    ctx.queen.push(&[push]).await?;
    Ok(true)
}
