-- Synthetic session reports for `cli generate`: one query, written straight to Parquet by COPY
-- (materialising these wide rows first would cost more than computing them).
-- Deterministic: every random draw is a hash of ($seed, an entity number, a draw number), so the
-- same arguments give the same rows. Parameters: $seed, $start_ms, $end_ms (epoch ms),
-- $customers (VARCHAR[]), $streams (per customer) and $sessions (per stream).
-- Each random draw is computed once in a CTE column: DuckDB repeats an expression each time an
-- alias in the same SELECT list names it, so derived values sit one CTE below their draws.
WITH
customers AS (
  SELECT unnest($customers) AS customer, generate_subscripts($customers, 1) - 1 AS ci
),
streams AS (
  SELECT
    customer, ci, si,
    ci * $streams + si AS stream_num,
    si % 2 = 0 AS is_live,
    customer || ':' ||
      CASE WHEN si % 2 = 0
        THEN ['live-main', 'live-sports', 'live-news', 'live-events', 'live-kids'][(si // 2) % 5 + 1]
        ELSE ['vod-library', 'vod-series', 'vod-films', 'vod-docs', 'vod-shorts'][(si // 2) % 5 + 1]
      END ||
      CASE WHEN si >= 10 THEN '-' || (si // 10 + 1)::VARCHAR ELSE '' END AS stream_id,
    -- The first customer's last stream was an event that ended at 55 % of the period.
    CASE WHEN ci = 0 AND si = $streams - 1
      THEN $start_ms + CAST(($end_ms - $start_ms) * 0.55 AS BIGINT)
      ELSE $end_ms END AS stream_end_ms,
    -- The second customer's first stream has a misbehaving peer: rare segments fail validation.
    ci = 1 AND si = 0 AS flaky,
    -- Live audiences overlap more, so peers serve a larger share than for VOD.
    CASE WHEN si % 2 = 0 THEN 0.62 + 0.22 * u01($seed, ci * $streams + si, 100)
                         ELSE 0.42 + 0.25 * u01($seed, ci * $streams + si, 100) END AS stream_share,
    CASE WHEN si % 2 = 0 THEN 4.0 + 6.0 * u01($seed, ci * $streams + si, 101)
                         ELSE 2.0 + 4.0 * u01($seed, ci * $streams + si, 101) END AS stream_peers
  FROM customers CROSS JOIN range($streams) AS r(si)
),
session_draws AS (
  SELECT
    st.*,
    st.stream_num * $sessions + k AS sn,
    u01($seed, sn, 1) AS d_start,
    normal01($seed, sn, 2) AS d_duration,
    u01($seed, sn, 3) AS d_cohort,
    u01($seed, sn, 4) AS d_device,
    u01($seed, sn, 5) AS d_region,
    u01($seed, sn, 6) AS d_viewer_known,
    u01($seed, sn, 7) AS d_viewer,
    u01($seed, sn, 8) AS d_sdk,
    u01($seed, sn, 9) AS d_signaling,
    u01($seed, sn, 10) AS d_rendition,
    u01($seed, sn, 11) AS d_share,
    u01($seed, sn, 12) AS d_nat,
    u01($seed, sn, 13) AS d_relay,
    normal01($seed, sn, 14) AS d_startup,
    u01($seed, sn, 17) AS d_peers,
    u01($seed, sn, 18) AS d_conn
  FROM streams AS st CROSS JOIN range($sessions) AS r(k)
),
session_shape AS (
  SELECT
    *,
    $start_ms + CAST(d_start * greatest(stream_end_ms - $start_ms - 15000, 1) AS BIGINT) AS start_ms,
    -- Skewed (log-normal) watch time: median 9 min live, 16 min VOD, clipped to [15 s, 4 h].
    CAST(least(greatest(exp(ln(CASE WHEN is_live THEN 540000 ELSE 960000 END) + 1.1 * d_duration), 15000), 14400000) AS BIGINT) AS planned_ms,
    CASE WHEN d_cohort < 0.10 THEN 'control' ELSE 'p2p' END AS cohort,
    CASE WHEN d_device < 0.38 THEN 'desktop' WHEN d_device < 0.73 THEN 'mobile'
         WHEN d_device < 0.85 THEN 'tv' WHEN d_device < 0.95 THEN 'tablet' ELSE 'other' END AS device,
    CASE WHEN d_region < 0.35 THEN 'eu-west' WHEN d_region < 0.65 THEN 'us-east'
         WHEN d_region < 0.77 THEN 'us-west' WHEN d_region < 0.90 THEN 'ap-south' ELSE 'sa-east' END AS region,
    -- Viewers come back: ids are drawn from a pool smaller than the customer's session count.
    CASE WHEN d_viewer_known < 0.04 THEN NULL
         ELSE 'v-' || lower(to_hex(h64($seed, ci * 1000000000 + CAST(d_viewer * greatest($streams * $sessions * 0.6, 1) AS BIGINT)))) END AS viewer_id,
    CASE WHEN d_sdk < 0.70 THEN '3.2.1' WHEN d_sdk < 0.95 THEN '3.1.4' ELSE '3.3.0-beta.2' END AS sdk_version,
    CASE WHEN d_signaling < 0.80 THEN '1.9.2' ELSE '1.8.7' END AS signaling_version,
    -- About 15 % of sessions sit behind symmetric NATs and reach peers through the relay.
    CASE WHEN d_nat < 0.15 THEN 0.3 + 0.5 * d_relay ELSE 0.0 END AS relay_share,
    st_peers_factor * stream_peers AS sess_peers,
    'sess-' || lower(to_hex(h64($seed, sn * 128 + 15))) || lower(to_hex(h64($seed, sn * 128 + 16))) AS session_id
  FROM (SELECT *, 0.7 + 0.6 * d_peers AS st_peers_factor FROM session_draws)
),
sessions AS (
  SELECT
    *,
    CASE WHEN stream_end_ms < $end_ms THEN least(planned_ms, stream_end_ms - start_ms) ELSE planned_ms END AS dur_ms,
    CASE device
      WHEN 'tv' THEN 6000
      WHEN 'desktop' THEN CASE WHEN d_rendition < 0.6 THEN 4500 ELSE 3000 END
      WHEN 'tablet' THEN 3000
      WHEN 'mobile' THEN CASE WHEN d_rendition < 0.5 THEN 1500 ELSE 800 END
      ELSE 2500 END AS base_bitrate,
    stream_share + CASE device WHEN 'mobile' THEN -0.08 WHEN 'tv' THEN 0.04 ELSE 0.0 END
      + 0.16 * (d_share - 0.5) AS sess_share,
    CASE WHEN region = 'ap-south' THEN 0.65 + 0.25 * d_conn ELSE 0.80 + 0.18 * d_conn END AS conn_success,
    CAST(exp(ln(CASE WHEN cohort = 'control' THEN 850 ELSE 900 END) + 0.45 * d_startup) AS INTEGER) AS startup_ms
  FROM session_shape
),
report_slots AS (
  SELECT
    ci, customer, stream_id, is_live, flaky, sn, start_ms, dur_ms, cohort, device, region, viewer_id,
    sdk_version, signaling_version, relay_share, sess_peers, sess_share, conn_success, startup_ms,
    base_bitrate, session_id,
    unnest(range(CAST(ceil(dur_ms / 30000.0) AS BIGINT))) AS seq
  FROM sessions
),
reports AS (
  SELECT
    *,
    least((seq + 1) * 30000, dur_ms) AS off_ms,
    (seq + 1) * 30000 >= dur_ms AS is_final,
    -- Four 64-bit hashes give sixteen 16-bit draws per report.
    h64($seed, (sn * 1000 + seq) * 8 + 1) AS h1,
    h64($seed, (sn * 1000 + seq) * 8 + 2) AS h2,
    h64($seed, (sn * 1000 + seq) * 8 + 3) AS h3,
    h64($seed, (sn * 1000 + seq) * 8 + 4) AS h4
  FROM report_slots
  -- Sessions still playing at the end of the period have sent no final report yet.
  WHERE start_ms + least((seq + 1) * 30000, dur_ms) <= $end_ms
),
report_draws AS (
  SELECT
    *,
    CAST(off_ms - seq * 30000 AS INTEGER) AS interval_ms,
    u16(h1, 0) AS r_stall, u16(h1, 1) AS r_stall_len, u16(h1, 2) AS r_rendition, u16(h1, 3) AS r_bytes,
    u16(h2, 0) AS r_share, u16(h2, 1) AS r_peers, u16(h2, 2) AS r_buffer, u16(h2, 3) AS r_upload,
    u16(h3, 0) AS r_attempts, u16(h3, 1) AS r_success, u16(h3, 2) AS r_signaling, u16(h3, 3) AS r_validation,
    u16(h4, 0) AS r_busy, u16(h4, 1) AS r_busy_n, u16(h4, 2) AS r_origin, u16(h4, 3) AS r_reason
  FROM reports
),
measured AS (
  SELECT
    *,
    CASE WHEN r_stall < CASE WHEN seq = 0 THEN 0.05 ELSE 0.02 END THEN 1 ELSE 0 END AS stall_count,
    CASE WHEN r_rendition < 0.07 THEN CAST(base_bitrate * 0.6 AS INTEGER) ELSE base_bitrate END AS bitrate,
    -- Cold start: few peers and a low share in the first minute, then the session's own level.
    CASE WHEN cohort = 'control' THEN 0.0
         WHEN seq = 0 THEN 0.06 * r_share
         WHEN seq = 1 THEN 0.15 + 0.25 * r_share
         ELSE least(greatest(sess_share + 0.2 * (r_share - 0.5), 0.0), 0.97) END AS share,
    CASE WHEN cohort = 'control' THEN 0
         WHEN seq = 0 THEN CAST(2 * r_peers AS INTEGER)
         WHEN seq = 1 THEN 1 + CAST(3 * r_peers AS INTEGER)
         ELSE greatest(0, CAST(round(sess_peers + 4 * (r_peers - 0.5)) AS INTEGER)) END AS peer_count,
    CASE WHEN cohort = 'control' THEN 0
         WHEN seq = 0 THEN 3 + CAST(4 * r_attempts AS INTEGER)
         WHEN seq = 1 THEN 1 + CAST(3 * r_attempts AS INTEGER)
         ELSE CAST(1.6 * r_attempts AS INTEGER) END AS attempts,
    CASE WHEN cohort = 'p2p' AND r_signaling < CASE WHEN seq = 0 THEN 0.02 ELSE 0.004 END THEN 1 ELSE 0 END AS signaling_errors,
    CASE WHEN flaky AND cohort = 'p2p' AND r_validation < 0.003 THEN 1 ELSE 0 END AS validation_failures,
    CASE WHEN cohort = 'p2p' AND seq >= 2 AND r_busy < 0.03 THEN 1 + CAST(3 * r_busy_n AS INTEGER) ELSE 0 END AS busy_events
  FROM report_draws
),
delivered AS (
  SELECT
    *,
    CASE WHEN stall_count > 0 THEN least(400 + CAST(3600 * r_stall_len * r_stall_len AS INTEGER), interval_ms // 2) ELSE 0 END AS stall_ms,
    CAST(bitrate * 125.0 * interval_ms / 1000 * (0.92 + 0.16 * r_bytes) AS BIGINT) AS bytes_total,
    least(attempts, greatest(0, CAST(round(attempts * conn_success + r_success - 0.5) AS INTEGER))) AS successes
  FROM measured
),
split AS (
  SELECT
    *,
    CAST(round(bytes_total * share) AS BIGINT) AS bytes_off
  FROM delivered
),
final_values AS (
  SELECT
    *,
    bytes_total - bytes_off AS bytes_fb,
    CAST(round(bytes_off * relay_share) AS BIGINT) AS bytes_relay
  FROM split
),
segments AS (
  SELECT
    *,
    -- Segments of about 4 s that fell back to the CDN in the interval.
    CASE WHEN bytes_fb > 0 THEN greatest(1, CAST(round(bytes_fb / (bitrate * 125.0 * 4)) AS INTEGER)) ELSE 0 END AS fb_segments
  FROM final_values
)
SELECT
  'rep-' || lower(to_hex(h1)) || lower(to_hex(h2)) AS reportId,
  session_id AS sessionId,
  viewer_id AS viewerId,
  stream_id AS streamId,
  make_timestamp(CAST((start_ms + off_ms) * 1000 AS BIGINT)) AS ts,
  interval_ms AS intervalMs,
  CAST(seq AS INTEGER) AS seq,
  is_final AS final,
  cohort,
  CASE WHEN is_live THEN 'live' ELSE 'vod' END AS contentType,
  bytes_off AS bytesOffloaded,
  bytes_fb AS bytesFallback,
  CASE WHEN cohort = 'control' THEN 0
       ELSE CAST(round(bytes_off * (0.5 + r_upload) * CASE WHEN device = 'mobile' THEN 0.3 ELSE 1.0 END) AS BIGINT) END AS bytesUploaded,
  peer_count AS peerCount,
  round(CASE WHEN seq = 0 THEN 1 + 3 * r_buffer
             ELSE greatest(CASE WHEN is_live THEN 6 + 14 * r_buffer ELSE 10 + 20 * r_buffer END
                           - CASE WHEN stall_count > 0 THEN 5 ELSE 0 END, 0.2) END, 3) AS bufferHealth,
  stall_count AS stallCount,
  stall_ms AS stallMs,
  interval_ms - stall_ms AS watchMs,
  CASE WHEN seq = 0 THEN startup_ms END AS startupMs,
  bitrate AS bitrateKbps,
  attempts AS p2pConnAttempts,
  successes AS p2pConnSuccesses,
  signaling_errors AS signalingErrors,
  validation_failures AS validationFailures,
  busy_events AS busyPeerEvents,
  -- MAP construction is costly in DuckDB, so the common shapes are literals and only the rare
  -- reports with extra reasons or empty paths go through the general (filtered) construction.
  CASE
    WHEN cohort = 'control' OR fb_segments = 0 THEN MAP {}::MAP(VARCHAR, INTEGER)
    WHEN busy_events = 0 AND validation_failures = 0 AND r_origin >= 0.001 THEN
      -- One reason takes an interval's few fallback segments: no peers while the swarm forms,
      -- then a peer timeout (50 %), a low buffer (30 %) or no peer holding the segment (20 %).
      MAP([CASE WHEN seq < 2 OR r_reason < 0.2 THEN 'no_peers' WHEN r_reason < 0.7 THEN 'peer_timeout' ELSE 'low_buffer' END],
          [fb_segments])
    ELSE map_from_entries(list_filter([
      {'k': CASE WHEN seq < 2 OR r_reason < 0.2 THEN 'no_peers' WHEN r_reason < 0.7 THEN 'peer_timeout' ELSE 'low_buffer' END, 'v': fb_segments},
      {'k': 'peer_busy', 'v': busy_events},
      {'k': 'validation_failed', 'v': validation_failures},
      {'k': 'origin_not_allowed', 'v': CASE WHEN r_origin < 0.001 THEN 1 ELSE 0 END}
    ], e -> e.v > 0))
  END AS fallbackReasons,
  CASE WHEN bytes_off = 0 THEN 'cdn' WHEN bytes_fb < 0.1 * bytes_total THEN 'p2p' ELSE 'hybrid' END AS deliveryMode,
  CASE
    WHEN bytes_off = 0 THEN MAP {'http': bytes_fb}
    WHEN bytes_fb > 0 AND bytes_relay = 0 THEN MAP {'webrtc': bytes_off, 'http': bytes_fb}
    WHEN bytes_fb > 0 AND bytes_relay < bytes_off THEN MAP {'webrtc': bytes_off - bytes_relay, 'relay': bytes_relay, 'http': bytes_fb}
    ELSE map_from_entries(list_filter([
      {'k': 'webrtc', 'v': bytes_off - bytes_relay},
      {'k': 'relay', 'v': bytes_relay},
      {'k': 'http', 'v': bytes_fb}
    ], e -> e.v > 0))
  END AS bytesByPath,
  device,
  region,
  sdk_version AS sdkVersion,
  signaling_version AS signalingVersion,
  customer,
  CAST(make_timestamp(CAST((start_ms + off_ms) * 1000 AS BIGINT)) AS DATE)::VARCHAR AS date
FROM segments
