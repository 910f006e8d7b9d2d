//! The ready index against the rows it summarises: after every kind of write, the index
//! holds exactly the queue-mode partitions with messages past their cursor, leased ones at
//! their lease's expiry; and a wildcard pop takes partitions oldest first however many
//! drained partitions the queue has.

use super::ack::{ack, extend, AckItem, AckStatus};
use super::messages::{append, Mode, PushItem};
use super::pop::{pop, PopOut, PopReq, Seed};
use super::queues::{configure, delete_queue, find_queue, Configure, QUEUE_MODE};
use super::{retention, schema};
use crate::broker::time::secs_us;
use rusqlite::{params, Connection};
use serde_json::{json, Map};

const SEC: i64 = 1_000_000;

fn db() -> Connection {
    let conn = Connection::open_in_memory().expect("sqlite");
    schema::create(&conn).expect("schema");
    conn
}

fn push(conn: &Connection, queue: &str, partition: &str, n: usize, now: i64) {
    let items: Vec<PushItem> = (0..n)
        .map(|_| PushItem {
            queue: queue.into(),
            partition: partition.into(),
            payload: "{}".into(),
            txn: None,
            trace_id: None,
            message_id: None,
        })
        .collect();
    append(conn, &items, now, Mode::Push)
        .expect("append")
        .expect("no duplicate");
}

fn pop_n(conn: &Connection, queue: &str, batch: i64, now: i64) -> PopOut {
    let req = PopReq {
        queue: queue.into(),
        partition: None,
        group: QUEUE_MODE.into(),
        batch,
        max_partitions: batch,
        lease_seconds: 30,
        auto_ack: false,
        seed: Seed::All,
    };
    pop(conn, &req, now).expect("pop")
}

fn acks(out: &PopOut, status: AckStatus) -> Vec<AckItem> {
    out.claims
        .iter()
        .flat_map(|c| {
            c.messages.iter().map(move |m| AckItem {
                txn: m.txn.clone(),
                partition_id: c.partition_id.clone(),
                status,
                lease_id: Some(out.lease_id.clone()),
                group: QUEUE_MODE.into(),
                error: None,
            })
        })
        .collect()
}

/// The index must equal what the partition and cursor rows say at `now`.
fn check(conn: &Connection, now: i64) {
    let mut want = conn
        .prepare(
            "SELECT p.id, c.lease_expires_at FROM partitions p
               LEFT JOIN cursors c ON c.partition_id = p.id AND c.grp = ?1
              WHERE p.last_offset >= p.log_start
                AND p.last_offset > COALESCE(c.committed, p.log_start - 1) ORDER BY p.id",
        )
        .expect("prepare");
    let want: Vec<(i64, Option<i64>)> = want
        .query_map([QUEUE_MODE], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut have = conn
        .prepare("SELECT partition_id, ready_at FROM ready ORDER BY partition_id")
        .expect("prepare");
    let have: Vec<(i64, i64)> = have
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let ids = |v: &[(i64, i64)]| v.iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(
        want.iter().map(|r| r.0).collect::<Vec<_>>(),
        ids(&have),
        "partitions in line"
    );
    for ((pid, lease), (_, at)) in want.iter().zip(&have) {
        match lease {
            Some(exp) if *exp >= now => assert_eq!(*at, exp + 1, "leased partition {pid}"),
            _ => assert!(*at <= now, "partition {pid} claimable at {at}, now {now}"),
        }
    }
}

#[test]
fn every_write_keeps_the_index_exact() {
    let conn = db();
    let mut now = 1_000 * SEC;
    for p in 0..6 {
        push(&conn, "q", &p.to_string(), 3, now);
    }
    check(&conn, now);
    // A claim leases three partitions; acking one whole, nacking one, leaving one leased.
    let out = pop_n(&conn, "q", 9, now);
    assert_eq!(out.claims.len(), 3);
    check(&conn, now);
    now += SEC;
    let mut items = acks(&out, AckStatus::Completed);
    let second = out.claims[1].partition_id.clone();
    for it in items.iter_mut().filter(|i| i.partition_id == second) {
        it.status = AckStatus::Failed;
    }
    let third = out.claims[2].partition_id.clone();
    items.retain(|i| i.partition_id != third);
    ack(&conn, &items, now).expect("ack");
    check(&conn, now);
    // Renewal moves the leased partition's row with its lease.
    extend(&conn, &out.lease_id, 120, now).expect("extend");
    check(&conn, now);
    // The lease runs out: the row's instant is now in the past.
    now += 200 * SEC;
    check(&conn, now);
    let again = pop_n(&conn, "q", 100, now);
    assert!(again.claims.iter().any(|c| c.partition_id == third));
    check(&conn, now);
    ack(&conn, &acks(&again, AckStatus::Completed), now).expect("ack");
    check(&conn, now);
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM ready", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 0, "everything acked: nothing in line");
    // Retention trims a partition's whole log: it leaves the line.
    let mut bag = Map::new();
    bag.insert("retentionEnabled".into(), json!(true));
    bag.insert("retentionSeconds".into(), json!(60));
    configure(
        &conn,
        Configure {
            queue: "q".into(),
            replace: false,
            bag,
            namespace: None,
            task: None,
        },
    )
    .expect("configure");
    push(&conn, "q", "old", 2, now);
    check(&conn, now);
    now += 120 * SEC;
    retention::sweep(&conn, now, 10_000).expect("sweep");
    check(&conn, now);
    // Deleting the queue empties its line.
    push(&conn, "q", "x", 1, now);
    delete_queue(&conn, "q").expect("delete");
    check(&conn, now);
}

#[test]
fn pops_take_the_longest_waiting_partition_first() {
    let conn = db();
    let base = 5_000 * SEC;
    for (i, p) in ["c", "a", "b"].iter().enumerate() {
        push(&conn, "q", p, 1, base + i as i64);
    }
    let names: Vec<String> = (0..3)
        .map(|k| {
            let out = pop_n(&conn, "q", 1, base + 10 + k);
            ack(&conn, &acks(&out, AckStatus::Completed), base + 10 + k).expect("ack");
            out.claims[0].partition.clone()
        })
        .collect();
    assert_eq!(names, ["c", "a", "b"]);
    // A partition acked with messages left goes to the back of the line.
    push(&conn, "q", "a", 2, base + 20);
    push(&conn, "q", "b", 1, base + 21);
    let first = pop_n(&conn, "q", 1, base + 30);
    assert_eq!(first.claims[0].partition, "a");
    ack(&conn, &acks(&first, AckStatus::Completed), base + 31).expect("ack");
    let next = pop_n(&conn, "q", 1, base + 32);
    assert_eq!(
        next.claims[0].partition, "b",
        "a waited less than b after its ack"
    );
}

#[test]
fn a_wide_queue_of_drained_partitions_still_pops_the_ready_one() {
    let conn = db();
    let now = 9_000 * SEC;
    // 20,000 partitions that each held one message, all consumed.
    let items: Vec<PushItem> = (0..20_000)
        .map(|i| PushItem {
            queue: "fifo".into(),
            partition: format!("g{i}"),
            payload: "{}".into(),
            txn: None,
            trace_id: None,
            message_id: None,
        })
        .collect();
    append(&conn, &items, now, Mode::Push)
        .expect("append")
        .expect("ok");
    loop {
        let out = pop_n(&conn, "fifo", 10, now + 1);
        if out.claims.is_empty() {
            break;
        }
        ack(&conn, &acks(&out, AckStatus::Completed), now + 1).expect("ack");
    }
    check(&conn, now + 1);
    push(&conn, "fifo", "g12345", 1, now + 2);
    let out = pop_n(&conn, "fifo", 10, now + 3);
    assert_eq!(out.claims.len(), 1);
    assert_eq!(out.claims[0].partition, "g12345");
    // The pop read the one row in line, not the queue's 20,000 partitions.
    let q = find_queue(&conn, "fifo").expect("find").expect("queue");
    let in_line: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM ready WHERE queue_id = ?1",
            params![q.id],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(in_line, 1, "only the leased partition is in line");
}

#[test]
fn a_database_from_before_the_index_gets_it_built_on_open() {
    let dir = std::env::temp_dir().join(format!("ready-migrate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("db.sqlite3");
    let now = 7_000 * SEC;
    {
        let conn = Connection::open(&path).expect("open");
        schema::create(&conn).expect("schema");
        push(&conn, "q", "a", 2, now);
        push(&conn, "q", "b", 1, now);
        let out = pop_n(&conn, "q", 1, now);
        assert_eq!(out.claims.len(), 1);
        // As an older version left it: no index rows, no marker.
        conn.execute_batch("DELETE FROM ready; DELETE FROM meta WHERE k = 'ready_index';")
            .expect("strip");
    }
    let conn = Connection::open(&path).expect("reopen");
    schema::create(&conn).expect("schema");
    check(&conn, now + 1);
    check(&conn, now + secs_us(31));
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}
