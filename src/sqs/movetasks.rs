//! `StartMessageMoveTask`, `CancelMessageMoveTask`, `ListMessageMoveTasks`: redrive run
//! backwards, out of a dead-letter queue.
//!
//! The component is stateless and lives for one request, so there is no background loop to
//! run a task. Instead a task advances INSIDE requests: `StartMessageMoveTask` moves a
//! bounded step before answering, and every later `ListMessageMoveTasks` (and `Start`, which
//! lists the source's tasks to enforce one active task) advances a RUNNING task one bounded
//! step further. A runtime with a clock steps every running task besides
//! ([`advance_running`], which our host calls once a second through the delivery route), so
//! a task nobody lists still runs, as on SQS. A step moves at most `STEP_CAP` messages,
//! runs at most `STEP_MS` (so `Start` answers before an SDK gives up on it, however slow
//! the broker) and, when
//! `MaxNumberOfMessagesPerSecond` is set, never more than `rate × (seconds since start + 1)`
//! in total, so the cap holds however often the task is polled. Progress lives in the KV
//! record `qs:mv:<TaskHandle>` and is written under compare-and-set, so any instance can
//! advance, list or cancel a task and concurrent steps add their counts rather than lose
//! them. `qs:mva:<source queue>` names the source's active task (created only-if-absent, so
//! two concurrent starts produce one task and one refusal).
//!
//! Each message moves atomically (push to the destination + ack of the original, one
//! transaction). With no `DestinationArn` a message goes back to the queue its dead-letter
//! copy names (`queen.sourceQueue`); a message that names none fails the task, as SQS fails
//! a task it cannot route. The task COMPLETES when the source has nothing claimable left or
//! it has moved the number the source held when it started. Finished tasks are kept 14 days.

use super::inflight;
use super::input::{invalid, missing, Input};
use super::naming;
use super::redrive::{self, Moved};
use super::registry::{self, QueueRecord};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope};
use crate::queen::{Ack, AckStatus, KvOp, KvOutcome, PopOptions};
use crate::wire::{ApiError, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

const TASK_PREFIX: &str = "qs:mv:";
const STEP_CAP: u64 = 100;
/// A step also ends once it has run this long (where the transport has a clock): over a
/// slow broker 100 moves took longer than an SDK waits for an answer.
const STEP_MS: u64 = 2_000;
const MOVE_LEASE_SECONDS: u64 = 30;
const KEEP_FINISHED_SECONDS: u64 = 14 * 86_400;
const MAX_RATE: i64 = 500;

/// A task's record key, by the task id its handle carries (or, for a handle minted before
/// handles carried one, by the handle itself).
fn task_key(handle: &str) -> String {
    let id = read_handle(handle).map_or_else(|| handle.to_string(), |h| h.task_id);
    format!("{TASK_PREFIX}{id}")
}

/// What a `TaskHandle` carries: AWS's handle is the base64 of
/// `{"taskId":"<uuid>","sourceArn":"<arn>"}`, and clients read it.
struct HandleParts {
    task_id: String,
    source_arn: String,
}

fn mint_handle(task_id: &str, source_arn: &str) -> String {
    use base64::Engine;
    let doc = json!({ "taskId": task_id, "sourceArn": source_arn }).to_string();
    base64::engine::general_purpose::STANDARD.encode(doc)
}

fn read_handle(handle: &str) -> Option<HandleParts> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(handle)
        .ok()?;
    let doc: Value = serde_json::from_slice(&bytes).ok()?;
    let field = |k: &str| {
        doc.get(k)?
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(HandleParts {
        task_id: field("taskId")?,
        source_arn: field("sourceArn")?,
    })
}

/// A task id shaped as a UUID (8-4-4-4-12 hex), as AWS's are.
fn mint_task_id(request_id: &str) -> String {
    let digest = Sha256::digest(format!("{request_id}/0").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    crate::model::uuid::hyphenated(&b)
}

const ACTIVE_PREFIX: &str = "qs:mva:";

fn active_key(source: &str) -> String {
    format!("{ACTIVE_PREFIX}{source}")
}

/// A task's progress record, stored as the `ListMessageMoveTasks` result shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Task {
    task_handle: String,
    status: String,
    source_arn: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    destination_arn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_number_of_messages_per_second: Option<u64>,
    approximate_number_of_messages_moved: u64,
    approximate_number_of_messages_to_move: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure_reason: Option<String>,
    started_timestamp: i64,
}

impl Task {
    fn running(&self) -> bool {
        self.status == "RUNNING"
    }

    /// The answer's form: a finished task has no handle to cancel.
    fn listed(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if !self.running() {
            if let Value::Object(m) = &mut v {
                m.remove("TaskHandle");
            }
        }
        v
    }
}

pub async fn start_message_move_task<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let source_arn = input.str("SourceArn")?;
    let source = queue_by_arn(ctx, source_arn, "SourceArn").await?;
    if !is_dead_letter_queue(ctx, &source.name).await? {
        return Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            "Source queue must be configured as a Dead Letter Queue.",
        ));
    }
    let destination_arn = input.opt_str("DestinationArn")?;
    if let Some(arn) = destination_arn {
        let dest = queue_by_arn(ctx, arn, "DestinationArn").await?;
        if dest.name == source.name {
            return Err(invalid("DestinationArn"));
        }
    }
    let rate = match input.opt_int("MaxNumberOfMessagesPerSecond")? {
        None => None,
        Some(r) if (1..=MAX_RATE).contains(&r) => Some(r as u64),
        Some(r) => {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Value {r} for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and {MAX_RATE}."),
            ))
        }
    };

    // One active task per source: a live marker whose task still runs refuses the start.
    // That task is advanced first: it moves only inside requests, and on SQS it would
    // have finished meanwhile had nobody listed it.
    let mut marker = ctx.queen.kv_get(&active_key(&source.name)).await?;
    if let Some(row) = &marker {
        let task = match row.value.get("handle").and_then(Value::as_str) {
            Some(h) => load(ctx, h).await?,
            None => None,
        };
        if let Some((t, version)) = task.filter(|(t, _)| t.running()) {
            if advance(ctx, t, version).await?.running() {
                return Err(already_running());
            }
            // Finishing it dropped the marker; a start racing this one may have set its own.
            marker = ctx.queen.kv_get(&active_key(&source.name)).await?;
            if let Some(h) = marker
                .as_ref()
                .and_then(|r| r.value.get("handle")?.as_str())
            {
                if load(ctx, h).await?.is_some_and(|(t, _)| t.running()) {
                    return Err(already_running());
                }
            }
        }
    }
    let expect = marker.map_or(0, |row| row.version);
    let depth = ctx.queen.depth(&source.name).await?.unwrap_or_default();
    let handle = mint_handle(&mint_task_id(ctx.request_id), source_arn);
    let task = Task {
        task_handle: handle.clone(),
        status: "RUNNING".into(),
        source_arn: source_arn.to_string(),
        destination_arn: destination_arn.map(str::to_string),
        max_number_of_messages_per_second: rate,
        approximate_number_of_messages_moved: 0,
        approximate_number_of_messages_to_move: depth.ready + depth.processing,
        failure_reason: None,
        started_timestamp: ctx.now_ms,
    };
    let ops = vec![
        KvOp::put(
            active_key(&source.name),
            json!({ "handle": handle }),
            Some(expect),
        )
        .required(),
        KvOp::put(task_key(&handle), to_value(&task), Some(0)).required(),
    ];
    let version = match ctx.queen.kv(ops).await? {
        KvOutcome::Done(r) => r.get(1).map_or(0, |r| r.version),
        KvOutcome::Conflict(_) => return Err(already_running()),
    };
    advance(ctx, task, version).await?;
    Ok(json!({ "TaskHandle": handle }))
}

pub async fn cancel_message_move_task<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let handle = input.str("TaskHandle")?;
    // SQS's three answers: a handle that is not one, one naming a queue that does not
    // exist, one naming a task that does not.
    let Some(parts) = read_handle(handle) else {
        return Err(invalid("TaskHandle"));
    };
    queue_by_arn(ctx, &parts.source_arn, "SourceArn").await?;
    for _ in 0..5 {
        let Some((mut task, version)) = load(ctx, handle).await? else {
            return Err(ApiError::new(
                ErrorCode::ResourceNotFoundException,
                "Task does not exist.",
            ));
        };
        if !task.running() {
            return Err(ApiError::new(
                ErrorCode::UnsupportedOperation,
                "Only active tasks can be cancelled.",
            ));
        }
        task.status = "CANCELLED".into();
        if let Some(t) = save(ctx, &task, version).await? {
            return Ok(
                json!({ "ApproximateNumberOfMessagesMoved": t.approximate_number_of_messages_moved }),
            );
        }
    }
    Err(ApiError::new(
        ErrorCode::InternalError,
        "The task changed while it was being cancelled; try again.",
    ))
}

pub async fn list_message_move_tasks<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let source_arn = input.str("SourceArn")?;
    queue_by_arn(ctx, source_arn, "SourceArn").await?;
    let max = match input.opt_int("MaxResults")? {
        None => 1,
        Some(n) if (1..=10).contains(&n) => n as usize,
        Some(n) => {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!(
                "Value {n} for parameter MaxResults is invalid. Reason: Must be between 1 and 10."
            ),
            ))
        }
    };
    let mut tasks = Vec::new();
    for row in ctx.queen.kv_prefix_all(TASK_PREFIX, 10_000).await? {
        if let Ok(t) = serde_json::from_value::<Task>(row.value) {
            if t.source_arn == source_arn {
                tasks.push((t, row.version));
            }
        }
    }
    tasks.sort_by_key(|t| std::cmp::Reverse(t.0.started_timestamp));
    tasks.truncate(max);
    let mut results = Vec::with_capacity(tasks.len());
    for (t, version) in tasks {
        let t = if t.running() {
            advance(ctx, t, version).await?
        } else {
            t
        };
        results.push(t.listed());
    }
    Ok(json!({ "Results": results }))
}

/// One bounded step of every running task (each source's `qs:mva:` marker names its
/// active one); how many were stepped. A task whose step fails is left for the next call.
pub async fn advance_running<T: Transport>(ctx: &Ctx<'_, T>) -> Result<usize, ApiError> {
    let mut stepped = 0;
    for row in ctx.queen.kv_prefix_all(ACTIVE_PREFIX, 1_000).await? {
        let Some(handle) = row.value.get("handle").and_then(Value::as_str) else {
            continue;
        };
        let Ok(Some((task, version))) = load(ctx, handle).await else {
            continue;
        };
        if task.running() && advance(ctx, task, version).await.is_ok() {
            stepped += 1;
        }
    }
    Ok(stepped)
}

/// One bounded step of a running task; answers the task as stored afterwards.
async fn advance<T: Transport>(
    ctx: &Ctx<'_, T>,
    mut task: Task,
    version: i64,
) -> Result<Task, ApiError> {
    let Some(source) = naming::name_from_arn(ctx.cfg, &task.source_arn).map(str::to_string) else {
        task.status = "FAILED".into();
        task.failure_reason = Some("The source queue is not valid.".into());
        return finish(ctx, task, version, 0).await;
    };
    let mut budget = STEP_CAP;
    if let Some(rate) = task.max_number_of_messages_per_second {
        let elapsed_s = (ctx.now_ms - task.started_timestamp).max(0) as u64 / 1000;
        let allowed = rate.saturating_mul(elapsed_s + 1);
        budget = budget.min(allowed.saturating_sub(task.approximate_number_of_messages_moved));
    }
    let fixed_dest = match &task.destination_arn {
        Some(arn) => naming::name_from_arn(ctx.cfg, arn).map(str::to_string),
        None => None,
    };
    let mut records: HashMap<String, Option<QueueRecord>> = HashMap::new();
    let source_record = registry::load(ctx, &source).await?.map(|s| s.record);
    let mut moved = 0u64;
    let mut done = false;
    let mut failure = None;
    let clock = || ctx.queen.transport().clock_ms();
    let started = clock();
    let out_of_time =
        || matches!((started, clock()), (Some(a), Some(b)) if b.saturating_sub(a) >= STEP_MS);
    while moved < budget && !out_of_time() {
        let Some(popped) = ctx
            .queen
            .pop_one(
                &source,
                None,
                PopOptions {
                    wait_ms: None,
                    lease_seconds: Some(MOVE_LEASE_SECONDS),
                },
            )
            .await?
        else {
            done = true;
            break;
        };
        let mut stop = false;
        for m in &popped.messages {
            let lease = m
                .lease_id
                .clone()
                .unwrap_or_else(|| popped.lease_id.clone());
            if let Some(q) = source_record.as_ref().filter(|q| q.fifo) {
                if inflight::deleted_in_claim(ctx, q, m).await? {
                    // Deleted by a consumer, still in its lane behind the claim's other
                    // messages: completed here, never moved back.
                    let _ = ctx
                        .queen
                        .ack(&Ack::of(m, &lease, AckStatus::Completed))
                        .await;
                    continue;
                }
            }
            let env = Envelope::from_stored(&m.data);
            let dest_name = fixed_dest
                .clone()
                .or_else(|| carried::source_queue(&env).map(str::to_string));
            let dest = match &dest_name {
                Some(name) => {
                    if !records.contains_key(name) {
                        let r = registry::load(ctx, name).await?.map(|s| s.record);
                        records.insert(name.clone(), r);
                    }
                    records.get(name).cloned().flatten()
                }
                None => None,
            };
            let Some(dest) = dest else {
                // Put it back untouched and stop: the task cannot route this message.
                let _ = ctx.queen.ack(&Ack::of(m, &lease, AckStatus::Retry)).await;
                failure = Some(match dest_name {
                    Some(n) => format!("The destination queue {n} does not exist."),
                    None => format!("Message {} does not name the queue it came from.", m.id),
                });
                stop = true;
                break;
            };
            if redrive::move_message(ctx, m, &lease, &dest, &carried::returned(env)).await?
                == Moved::Yes
            {
                moved += 1;
            }
        }
        if stop {
            break;
        }
    }
    if let Some(reason) = failure {
        task.status = "FAILED".into();
        task.failure_reason = Some(reason);
    } else if done
        || (task.approximate_number_of_messages_to_move > 0
            && task.approximate_number_of_messages_moved + moved
                >= task.approximate_number_of_messages_to_move)
    {
        task.status = "COMPLETED".into();
    }
    finish(ctx, task, version, moved).await
}

/// Records a step's `moved` count and status under compare-and-set; on a lost race
/// re-reads and adds the count to whatever is stored (a cancel that won keeps its status).
async fn finish<T: Transport>(
    ctx: &Ctx<'_, T>,
    task: Task,
    mut version: i64,
    moved: u64,
) -> Result<Task, ApiError> {
    let mut next = task.clone();
    next.approximate_number_of_messages_moved += moved;
    for _ in 0..5 {
        if let Some(saved) = save(ctx, &next, version).await? {
            return Ok(saved);
        }
        let Some((current, v)) = load(ctx, &task.task_handle).await? else {
            return Ok(next);
        };
        version = v;
        let status = if current.running() {
            next.status.clone()
        } else {
            current.status.clone()
        };
        let reason = if current.running() {
            next.failure_reason.clone()
        } else {
            current.failure_reason.clone()
        };
        next = Task {
            status,
            failure_reason: reason,
            approximate_number_of_messages_moved: current.approximate_number_of_messages_moved
                + moved,
            ..current
        };
    }
    Ok(next)
}

/// Writes `task` if its record is still at `version`; `None` when another writer won.
/// A finished task drops its source's active marker and is kept for 14 days.
async fn save<T: Transport>(
    ctx: &Ctx<'_, T>,
    task: &Task,
    version: i64,
) -> Result<Option<Task>, ApiError> {
    let key = task_key(&task.task_handle);
    let mut ops = vec![if task.running() {
        KvOp::put(key, to_value(task), Some(version)).required()
    } else {
        KvOp::put_ttl(key, to_value(task), KEEP_FINISHED_SECONDS, Some(version)).required()
    }];
    if !task.running() {
        if let Some(source) = naming::name_from_arn(ctx.cfg, &task.source_arn) {
            ops.push(KvOp::delete(active_key(source), None));
        }
    }
    match ctx.queen.kv(ops).await? {
        KvOutcome::Done(_) => Ok(Some(task.clone())),
        KvOutcome::Conflict(_) => Ok(None),
    }
}

async fn load<T: Transport>(
    ctx: &Ctx<'_, T>,
    handle: &str,
) -> Result<Option<(Task, i64)>, ApiError> {
    if handle.is_empty() || handle.len() > 1024 {
        return Ok(None);
    }
    Ok(ctx
        .queen
        .kv_get(&task_key(handle))
        .await?
        .and_then(|row| Some((serde_json::from_value(row.value).ok()?, row.version))))
}

/// Whether any queue's `RedrivePolicy` names `name` as its dead-letter queue.
async fn is_dead_letter_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
) -> Result<bool, ApiError> {
    let rows = ctx
        .queen
        .kv_prefix_all(registry::QUEUE_PREFIX, 10_000)
        .await?;
    Ok(rows.into_iter().any(|row| {
        registry::parse(row.value)
            .and_then(|r| r.redrive(ctx.cfg))
            .is_some_and(|(dlq, _)| dlq == name)
    }))
}

async fn queue_by_arn<T: Transport>(
    ctx: &Ctx<'_, T>,
    arn: &str,
    param: &str,
) -> Result<QueueRecord, ApiError> {
    if arn.is_empty() {
        return Err(missing(param));
    }
    let Some(name) = naming::name_from_arn(ctx.cfg, arn) else {
        return Err(not_found(param));
    };
    match registry::load(ctx, name).await? {
        Some(s) => Ok(s.record),
        None => Err(not_found(param)),
    }
}

fn to_value(t: &Task) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

fn not_found(param: &str) -> ApiError {
    ApiError::new(
        ErrorCode::ResourceNotFoundException,
        format!("The resource that you specified for the {param} parameter doesn't exist."),
    )
}

/// `InvalidParameterValue`, as recorded against SQS (its model's `UnsupportedOperation`
/// is not what it answers).
fn already_running() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidParameterValue,
        "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
    )
}
