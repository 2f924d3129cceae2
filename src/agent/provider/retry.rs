//! When and how long to wait before trying a failed request again.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// 408 (timeout), 409 (OpenAI: "try again"), 429 (rate limit) and every 5xx
/// are transient; anything else will fail the same way again.
pub(crate) fn is_retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// Exponential backoff with ±25% jitter (so many clients that failed
/// together do not retry together): `initial * 2^(retry-1)`, capped.
/// `unit` is a random number in `[0, 1)`.
pub fn backoff(retry: u32, initial: Duration, max: Duration, unit: f64) -> Duration {
    let exponent = retry.saturating_sub(1).min(20);
    let base = initial.saturating_mul(1 << exponent).min(max);
    let factor = 0.75 + 0.5 * unit.clamp(0.0, 1.0);
    // `try_` because a configured `max` near `Duration::MAX` must not panic.
    Duration::try_from_secs_f64(base.as_secs_f64() * factor)
        .unwrap_or(max)
        .min(max)
}

/// How long the server asked us to wait: OpenAI's `retry-after-ms`, or
/// `Retry-After` as delta-seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let ms = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok());
    if let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms.min(1e9) / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the preferred HTTP date form (IMF-fixdate, RFC 9110 §5.6.7):
/// `Sun, 06 Nov 1994 08:49:37 GMT`. The obsolete forms are not worth the
/// code: no server we talk to sends them, and failing just means backoff.
pub fn parse_http_date(text: &str) -> Option<SystemTime> {
    let rest = text.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, clock, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as u8 + 1;
    let date = time::Date::from_calendar_date(
        year.parse().ok()?,
        time::Month::try_from(month).ok()?,
        day.parse().ok()?,
    )
    .ok()?;
    let mut hms = clock.split(':').map(str::parse::<u8>);
    let (Some(Ok(h)), Some(Ok(m)), Some(Ok(s)), None) =
        (hms.next(), hms.next(), hms.next(), hms.next())
    else {
        return None;
    };
    let time = time::Time::from_hms(h, m, s).ok()?;
    let unix = date.with_time(time).assume_utc().unix_timestamp();
    let secs = u64::try_from(unix).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_seconds_ms_and_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after-ms", "250"), ("retry-after", "3")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        // 784111777 = Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
                now
            ),
            Some(Duration::from_secs(7))
        );
        let later = now + Duration::from_secs(100);
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
                later
            ),
            Some(Duration::ZERO)
        );
        for bad in [
            "soon",
            "-1",
            "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT",
            "",
        ] {
            assert_eq!(
                retry_after(&headers(&[("retry-after", bad)]), now),
                None,
                "{bad}"
            );
        }
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter_and_cap() {
        let (initial, max) = (Duration::from_millis(500), Duration::from_secs(30));
        assert_eq!(backoff(1, initial, max, 0.5), Duration::from_millis(500));
        assert_eq!(backoff(3, initial, max, 0.5), Duration::from_secs(2));
        assert_eq!(backoff(2, initial, max, 0.0), Duration::from_millis(750));
        assert_eq!(backoff(2, initial, max, 0.999_999).as_millis(), 1249);
        assert_eq!(backoff(40, initial, max, 0.9), max);
        assert_eq!(
            backoff(99, Duration::MAX, Duration::MAX, 1.0),
            Duration::MAX
        );
    }

    #[test]
    fn which_statuses_retry() {
        for code in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable(StatusCode::from_u16(code).unwrap()), "{code}");
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(!is_retryable(StatusCode::from_u16(code).unwrap()), "{code}");
        }
    }
}
