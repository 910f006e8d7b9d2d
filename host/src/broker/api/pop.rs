//! `GET /api/v1/pop/queue/:queue[/partition/:p]` (§4.2) with broker-side long polling, and the
//! discovery pop `GET /api/v1/pop?namespace=&task=`.

use super::reply::{store_failed, Reply};
use super::{Ctx, Query};
use crate::broker::store::pop::{pop as claim, PopOut, PopReq, Seed};
use crate::broker::store::queues::QUEUE_MODE;
use crate::broker::time::{iso_us, now_us, parse_iso};
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;
use std::time::Duration;
use tokio::time::Instant;

/// Re-check while parked on a queue with a `delayedProcessing` or `windowBuffer` option,
/// whose expiry no event announces. Pushes, releases, timer fires and lease expiry wake a
/// pop directly; on a queue without those options a parked pop looks again only when woken
/// (every look is a write on the single writer thread: ten thousand polls re-checking once
/// a second kept it so busy that pops outlasted their callers' deadlines).
const RECHECK: Duration = Duration::from_millis(1000);

#[derive(Serialize)]
struct Msg<'a> {
    id: &'a str,
    #[serde(rename = "transactionId")]
    transaction_id: &'a str,
    #[serde(rename = "traceId")]
    trace_id: Option<&'a str>,
    data: &'a RawValue,
    #[serde(rename = "producerSub")]
    producer_sub: Option<&'a str>,
    #[serde(rename = "createdAt")]
    created_at: String,
    #[serde(rename = "partitionId")]
    partition_id: &'a str,
    partition: &'a str,
    #[serde(rename = "leaseId")]
    lease_id: &'a str,
    #[serde(rename = "consumerGroup")]
    consumer_group: &'a str,
    #[serde(rename = "deliveryAttempt")]
    delivery_attempt: i64,
    offset: i64,
}

#[derive(Serialize)]
struct Answer<'a> {
    success: bool,
    queue: &'a str,
    partition: &'a str,
    #[serde(rename = "partitionId")]
    partition_id: &'a str,
    #[serde(rename = "leaseId")]
    lease_id: &'a str,
    #[serde(rename = "consumerGroup")]
    consumer_group: &'a str,
    messages: Vec<Msg<'a>>,
    #[serde(rename = "partitionsClaimed")]
    partitions_claimed: usize,
}

fn render(out: &PopOut, group: &str) -> Reply {
    // An empty or unreadable stored payload is delivered as `null`.
    let null: Box<RawValue> = Box::<RawValue>::default();
    let mut datas: Vec<Option<Box<RawValue>>> = Vec::new();
    for c in &out.claims {
        for m in &c.messages {
            datas.push(RawValue::from_string(m.payload.clone()).ok());
        }
    }
    let mut messages = Vec::new();
    let mut k = 0;
    for c in &out.claims {
        for m in &c.messages {
            let data: &RawValue = match datas.get(k) {
                Some(Some(d)) => d,
                _ => &null,
            };
            k += 1;
            messages.push(Msg {
                id: &m.id,
                transaction_id: &m.txn,
                trace_id: m.trace_id.as_deref(),
                data,
                producer_sub: None,
                created_at: iso_us(m.created_at),
                partition_id: &c.partition_id,
                partition: &c.partition,
                lease_id: &out.lease_id,
                consumer_group: group,
                delivery_attempt: c.attempt,
                offset: m.offset,
            });
        }
    }
    let first = &out.claims[0];
    let a = Answer {
        success: true,
        queue: &out.queue,
        partition: &first.partition,
        partition_id: &first.partition_id,
        lease_id: &out.lease_id,
        consumer_group: group,
        messages,
        partitions_claimed: out.claims.len(),
    };
    match serde_json::to_string(&a) {
        Ok(t) => Reply::raw_json(200, t),
        Err(e) => store_failed("pop", e),
    }
}

fn int(q: &Query, k: &str, default: i64) -> Result<i64, Reply> {
    match q.get(k) {
        None | Some("") => Ok(default),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map_err(|_| Reply::error(400, format!("bad query: {k} must be an integer"))),
    }
}

fn boolean(q: &Query, k: &str) -> bool {
    matches!(q.get(k), Some("true") | Some("1"))
}

struct Params {
    req: PopReq,
    wait: bool,
    timeout_ms: i64,
}

fn params(queue: &str, partition: Option<&str>, q: &Query) -> Result<Params, Reply> {
    let group = match q.get("consumerGroup") {
        Some(g) if !g.is_empty() => g.to_string(),
        _ => QUEUE_MODE.to_string(),
    };
    let seed = match (q.get("subscriptionFrom"), q.get("subscriptionMode")) {
        (Some("now"), _) => Seed::New,
        (Some(ts), _) if !ts.is_empty() => match parse_iso(ts) {
            Some(us) => Seed::From(us),
            None => {
                return Err(Reply::error(
                    400,
                    "bad query: subscriptionFrom must be now or an ISO timestamp",
                ))
            }
        },
        (_, Some("new")) => Seed::New,
        _ => Seed::All,
    };
    Ok(Params {
        req: PopReq {
            queue: queue.to_string(),
            partition: partition.map(str::to_string),
            group,
            batch: int(q, "batch", 200)?,
            max_partitions: int(q, "partitions", 1)?,
            lease_seconds: int(q, "leaseSeconds", 0)?,
            auto_ack: boolean(q, "autoAck"),
            seed,
        },
        wait: boolean(q, "wait"),
        timeout_ms: int(q, "timeout", 30_000)?.max(0),
    })
}

/// One claim attempt per candidate queue, parked on the notifiers of all of them until a
/// claim succeeds or the deadline passes.
async fn run(ctx: &Ctx, reqs: Vec<PopReq>, wait: bool, timeout_ms: i64) -> Reply {
    // No ceiling on the wire; a day keeps the deadline arithmetic from overflowing.
    let deadline = Instant::now() + Duration::from_millis((timeout_ms as u64).min(86_400_000));
    let group = reqs.first().map(|r| r.group.clone()).unwrap_or_default();
    loop {
        let notifies: Vec<_> = reqs.iter().map(|r| ctx.notify.queue(&r.queue)).collect();
        let mut parked: Vec<_> = notifies.iter().map(|n| Box::pin(n.notified())).collect();
        for p in parked.iter_mut() {
            p.as_mut().enable();
        }
        let mut ripens = false;
        for r in &reqs {
            let req = r.clone();
            let claimed = if req.auto_ack {
                // An auto-ack pop moves the cursor: that must be kept.
                ctx.store
                    .write(move |conn| claim(conn, &req, now_us()))
                    .await
            } else {
                ctx.store
                    .write_lease(move |conn| claim(conn, &req, now_us()))
                    .await
            };
            match claimed {
                Ok(out) if !out.claims.is_empty() => return render(&out, &group),
                Ok(out) => ripens |= out.ripens,
                Err(e) => return store_failed("pop", e),
            }
        }
        let now = Instant::now();
        if !wait || now >= deadline {
            return Reply::no_content();
        }
        let nap = if ripens {
            (deadline - now).min(RECHECK)
        } else {
            deadline - now
        };
        let any_push = futures_select_all(parked);
        tokio::select! {
            _ = any_push => {}
            // The deadline: nothing woke the pop since its last look.
            _ = tokio::time::sleep(nap) => {
                if Instant::now() >= deadline {
                    return Reply::no_content();
                }
            }
            _ = ctx.notify.closing.notified() => return Reply::no_content(),
        }
    }
}

/// Resolves when any of the parked notifications fires.
async fn futures_select_all<F: std::future::Future<Output = ()> + Unpin>(mut futs: Vec<F>) {
    if futs.is_empty() {
        return std::future::pending().await;
    }
    std::future::poll_fn(move |cx| {
        for f in futs.iter_mut() {
            if std::pin::Pin::new(f).poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await
}

pub async fn pop(ctx: &Ctx, queue: &str, partition: Option<&str>, q: &Query) -> Reply {
    let p = match params(queue, partition, q) {
        Ok(p) => p,
        Err(r) => return r,
    };
    run(ctx, vec![p.req], p.wait, p.timeout_ms).await
}

pub async fn discovery(ctx: &Ctx, q: &Query) -> Reply {
    let ns = q
        .get("namespace")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let task = q.get("task").filter(|s| !s.is_empty()).map(str::to_string);
    if ns.is_none() && task.is_none() {
        return Reply::json(
            400,
            &json!({"success": false, "error": "namespace or task is required", "messages": []}),
        );
    }
    let names = ctx
        .store
        .read(move |conn| {
            let mut st = conn.prepare_cached(
                "SELECT name FROM queues WHERE (?1 IS NULL OR namespace = ?1) AND (?2 IS NULL OR task = ?2)
                  ORDER BY random()",
            )?;
            let v = st
                .query_map(rusqlite::params![ns, task], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(v)
        })
        .await;
    let names = match names {
        Ok(n) => n,
        Err(e) => return store_failed("pop", e),
    };
    let mut reqs = Vec::new();
    let mut common = None;
    for n in names {
        let p = match params(&n, None, q) {
            Ok(p) => p,
            Err(r) => return r,
        };
        common = Some((p.wait, p.timeout_ms));
        reqs.push(p.req);
    }
    let (wait, timeout) = match common {
        Some(c) => c,
        None => return Reply::no_content(),
    };
    run(ctx, reqs, wait, timeout).await
}
