//! The open-files limit. Every connection is a descriptor, and a long poll to a Queen
//! reached over the network holds a second one for its broker call: ten thousand waiting
//! polls need more than the 1,024 a shell often starts processes with. The soft limit is
//! raised toward what the listener's limits can use, never past the hard limit.

use super::server::Limits;

/// Descriptors kept for everything but connections and broker calls (the store, logs).
const SPARE: u64 = 1024;

/// Raises the soft open-files limit to what `limits` may use (or the hard limit, if lower):
/// a descriptor per connection, and one per waiting long poll when broker calls go over
/// the network (the embedded broker is called in process). Answers a line to print when
/// even the hard limit is short of it.
pub fn raise_open_files_limit(limits: &Limits, remote_broker: bool) -> Option<String> {
    let polls = if remote_broker {
        u64::from(limits.max_long_polls)
    } else {
        0
    };
    raise_to(u64::from(limits.max_connections) + polls + SPARE)
}

#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
fn raise_to(wanted: u64) -> Option<String> {
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read or write only the struct passed by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) } != 0 {
        return None;
    }
    let hard = now.rlim_max as u64;
    let target = wanted.min(hard);
    if (now.rlim_cur as u64) < target {
        let raised = libc::rlimit {
            rlim_cur: target as libc::rlim_t,
            rlim_max: now.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Some(format!(
                "could not raise the open-files limit from {} to {target}",
                now.rlim_cur
            ));
        }
    }
    (hard < wanted).then(|| {
        format!(
            "the open-files limit is {hard}, short of the {wanted} the connection and long-poll \
             limits may use; past it new connections are refused (raise `ulimit -Hn`, or lower \
             QUEEN_SQS_MAX_CONNECTIONS / QUEEN_SQS_MAX_LONG_POLLS)"
        )
    })
}

#[cfg(not(unix))]
fn raise_to(_wanted: u64) -> Option<String> {
    None
}
