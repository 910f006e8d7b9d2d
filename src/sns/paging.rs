//! `NextToken` paging over a KV prefix walk, 100 per page as AWS pages SNS listings.
//! The token is the last key served, base64url encoded: opaque to a client, and checked
//! to lie under the walk's own prefix so it cannot steer a listing elsewhere.

use super::errors::{broker, invalid};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::KvRow;
use crate::wire::ApiError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

pub const PAGE: u32 = 100;

pub async fn page<T: Transport>(
    ctx: &Ctx<'_, T>,
    prefix: &str,
    token: Option<&str>,
) -> Result<(Vec<KvRow>, Option<String>), ApiError> {
    let after = match token.filter(|t| !t.is_empty()) {
        None => None,
        Some(t) => Some(
            URL_SAFE_NO_PAD
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .filter(|k| k.starts_with(prefix))
                .ok_or_else(|| invalid("NextToken"))?,
        ),
    };
    let (rows, next) = ctx
        .queen
        .kv_prefix(prefix, after, PAGE)
        .await
        .map_err(broker)?;
    Ok((rows, next.map(|k| URL_SAFE_NO_PAD.encode(k.as_bytes()))))
}
