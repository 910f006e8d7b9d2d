//! The native side: Queen's HTTP API called directly on the same broker with a keep-alive
//! hyper client, the calls the facade itself makes for send / receive / delete. With
//! `QUEEN_SQS_BROKER_TOKEN` set, every call carries it (`Authorization: Bearer`), as the
//! embedded broker's port wants.

use anyhow::{ensure, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};

#[derive(Clone)]
pub struct Queen {
    http: Client<HttpConnector, Full<Bytes>>,
    base: String,
    authorization: Option<String>,
}

/// A popped message with what its ack needs.
pub struct Claimed {
    pub transaction_id: Value,
    pub partition_id: Value,
    pub lease_id: Value,
}

impl Queen {
    pub fn new(base: &str) -> Queen {
        Queen {
            http: Client::builder(TokioExecutor::new()).build_http(),
            base: base.trim_end_matches('/').to_string(),
            authorization: std::env::var("QUEEN_SQS_BROKER_TOKEN")
                .ok()
                .filter(|t| !t.trim().is_empty())
                .map(|t| format!("Bearer {}", t.trim())),
        }
    }

    async fn call(&self, method: &str, path: &str, body: Option<String>) -> Result<(u16, Value)> {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("content-type", "application/json");
        if let Some(a) = &self.authorization {
            req = req.header("authorization", a.as_str());
        }
        let req = req.body(Full::new(Bytes::from(body.unwrap_or_default())))?;
        let resp = self.http.request(req).await.context("broker request")?;
        let status = resp.status().as_u16();
        let bytes = resp.into_body().collect().await?.to_bytes();
        let v = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).context("broker answer is not JSON")?
        };
        Ok((status, v))
    }

    /// Pushes SQS-envelope payloads (`{"b": body}`, what SendMessage stores) spread over
    /// lanes `0..lanes` in turn, `first..first+count`, in one call.
    pub async fn push_envelopes(
        &self,
        queue: &str,
        lanes: u64,
        first: u64,
        count: u64,
    ) -> Result<u64> {
        self.push_items(queue, first, count, |n| n % lanes).await
    }

    /// Pushes `count` envelopes, item `n` to the lane `lane(n)`; checks every item was answered.
    async fn push_items(
        &self,
        queue: &str,
        first: u64,
        count: u64,
        lane: impl Fn(u64) -> u64,
    ) -> Result<u64> {
        let items: Vec<Value> = (first..first + count)
            .map(|n| {
                json!({"queue": queue, "partition": lane(n).to_string(),
                       "payload": {"b": crate::sdk::body(n)}})
            })
            .collect();
        let (s, v) = self
            .call(
                "POST",
                "/api/v1/push",
                Some(json!({ "items": items }).to_string()),
            )
            .await?;
        ensure!(s == 201 || s == 200, "push answered {s}: {v}");
        let n = v.as_array().map(|a| a.len()).unwrap_or(0) as u64;
        ensure!(n == count, "push of {count} answered {n} results");
        Ok(n)
    }

    /// Fills `count` messages in pushes of `per_call`.
    pub async fn fill(
        &self,
        queue: &str,
        lanes: u64,
        first: u64,
        count: u64,
        per_call: u64,
    ) -> Result<()> {
        let mut n = first;
        while n < first + count {
            let k = per_call.min(first + count - n);
            self.push_envelopes(queue, lanes, n, k).await?;
            n += k;
        }
        Ok(())
    }

    /// One KV read, as the facade reads a queue's registry record.
    pub async fn kv_get(&self, key: &str) -> Result<()> {
        let body = json!({"operations": [{"op": "get", "ns": "qs", "key": key}]});
        let (s, v) = self
            .call("POST", "/api/v1/kv", Some(body.to_string()))
            .await?;
        ensure!(s == 200, "kv answered {s}: {v}");
        Ok(())
    }

    /// Wildcard pop of one message, no wait, the lease the facade would ask for.
    pub async fn pop_one(&self, queue: &str) -> Result<Option<Claimed>> {
        let path =
            format!("/api/v1/pop/queue/{queue}?batch=1&partitions=1&wait=false&leaseSeconds=30");
        let (s, v) = self.call("GET", &path, None).await?;
        if s == 204 || v.is_null() {
            return Ok(None);
        }
        ensure!(s == 200, "pop answered {s}: {v}");
        let Some(m) = v["messages"].get(0) else {
            return Ok(None);
        };
        let lease = if m["leaseId"].is_null() {
            v["leaseId"].clone()
        } else {
            m["leaseId"].clone()
        };
        Ok(Some(Claimed {
            transaction_id: m["transactionId"].clone(),
            partition_id: m["partitionId"].clone(),
            lease_id: lease,
        }))
    }

    pub async fn ack(&self, c: &Claimed) -> Result<()> {
        let body = json!({"transactionId": c.transaction_id, "partitionId": c.partition_id,
                          "leaseId": c.lease_id, "status": "completed"});
        let (s, v) = self
            .call("POST", "/api/v1/ack", Some(body.to_string()))
            .await?;
        let item = v.get(0).unwrap_or(&v);
        ensure!(s == 200 && item["success"] == true, "ack answered {s}: {v}");
        Ok(())
    }
}

/// A claim of up to `batch` messages with the acks that settle it.
pub struct ClaimedBatch {
    pub acks: Vec<Value>,
}

impl Queen {
    /// Pushes `count` payloads spread pseudo-randomly over lanes `0..lanes` (the lane is a
    /// hash of the item number, so every caller spreads the same way).
    pub async fn push_spread(
        &self,
        queue: &str,
        lanes: u64,
        first: u64,
        count: u64,
    ) -> Result<u64> {
        self.push_items(queue, first, count, |n| {
            n.wrapping_mul(0x9E37_79B9_7F4A_7C15) % lanes
        })
        .await
    }

    /// Wildcard pop of up to `batch` messages from up to `batch` partitions, no wait.
    pub async fn pop_batch(&self, queue: &str, batch: u32) -> Result<Option<ClaimedBatch>> {
        let path = format!(
            "/api/v1/pop/queue/{queue}?batch={batch}&partitions={batch}&wait=false&leaseSeconds=30"
        );
        let (s, v) = self.call("GET", &path, None).await?;
        if s == 204 || v.is_null() {
            return Ok(None);
        }
        ensure!(s == 200, "pop answered {s}: {v}");
        let lease = v["leaseId"].clone();
        let acks: Vec<Value> = v["messages"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .map(|m| {
                        json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                               "leaseId": if m["leaseId"].is_null() { &lease } else { &m["leaseId"] },
                               "status": "completed"})
                    })
                    .collect()
            })
            .unwrap_or_default();
        if acks.is_empty() {
            return Ok(None);
        }
        Ok(Some(ClaimedBatch { acks }))
    }

    /// Deletes a queue and everything in it.
    pub async fn delete_queue(&self, queue: &str) -> Result<()> {
        let (s, v) = self
            .call("DELETE", &format!("/api/v1/resources/queues/{queue}"), None)
            .await?;
        ensure!(s < 300 || s == 404, "delete queue answered {s}: {v}");
        Ok(())
    }

    /// Acks a claim in one call; answers how many were settled.
    pub async fn ack_batch(&self, c: &ClaimedBatch) -> Result<u64> {
        let body = json!({ "acknowledgments": c.acks });
        let (s, v) = self
            .call("POST", "/api/v1/ack/batch", Some(body.to_string()))
            .await?;
        ensure!(s == 200, "ack batch answered {s}: {v}");
        let ok = v
            .as_array()
            .map(|a| a.iter().filter(|r| r["success"] == true).count())
            .unwrap_or(0);
        ensure!(
            ok == c.acks.len(),
            "ack batch settled {ok} of {}: {v}",
            c.acks.len()
        );
        Ok(ok as u64)
    }
}

impl Queen {
    /// `POST /api/v1/configure` with this option bag.
    pub async fn configure(&self, queue: &str, options: Value) -> Result<()> {
        let body = json!({"queue": queue, "options": options});
        let (s, v) = self
            .call("POST", "/api/v1/configure", Some(body.to_string()))
            .await?;
        ensure!(s == 200, "configure answered {s}: {v}");
        Ok(())
    }

    /// Pushes `count` envelopes whose body is `bytes` long, spread as [`Queen::push_spread`];
    /// with `dedup`, each carries its own transaction id (a FIFO deduplication id).
    pub async fn push_sized(
        &self,
        queue: &str,
        lanes: u64,
        first: u64,
        count: u64,
        bytes: usize,
        dedup: bool,
    ) -> Result<u64> {
        let items: Vec<Value> = (first..first + count)
            .map(|n| {
                let lane = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) % lanes;
                let body = format!("{n:>12}{}", ".".repeat(bytes.saturating_sub(12)));
                let mut item = json!({"queue": queue, "partition": lane.to_string(),
                                      "payload": {"b": body}});
                if dedup {
                    item["transactionId"] = json!(format!("dedup-{n}"));
                }
                item
            })
            .collect();
        let (s, v) = self
            .call(
                "POST",
                "/api/v1/push",
                Some(json!({ "items": items }).to_string()),
            )
            .await?;
        ensure!(s == 201 || s == 200, "push answered {s}: {v}");
        let n = v.as_array().map(|a| a.len()).unwrap_or(0) as u64;
        ensure!(n == count, "push of {count} answered {n} results");
        Ok(n)
    }

    /// (pending, processing) of the queue for the queue-mode group.
    pub async fn depth(&self, queue: &str) -> Result<(u64, u64)> {
        let path = format!("/api/v1/resources/queues/{queue}/depth?group=__QUEUE_MODE__");
        let (s, v) = self.call("GET", &path, None).await?;
        ensure!(s == 200, "depth answered {s}: {v}");
        Ok((
            v["pending"].as_u64().unwrap_or(0),
            v["processing"].as_u64().unwrap_or(0),
        ))
    }
}
