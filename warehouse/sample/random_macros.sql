-- Deterministic pseudo-random draws for the generator, pure functions of a seed and numbers.
-- DuckDB's multi-argument hash() correlates its arguments, so keys are folded into one integer
-- and mixed through hash() of a single value, which is a full 64-bit finaliser.
CREATE OR REPLACE TEMP MACRO h64(seed, k) AS hash(xor(hash(k), hash(seed)));
-- A uniform in [0, 1) for draw `tag` (0–127) of entity `k`.
CREATE OR REPLACE TEMP MACRO u01(seed, k, tag) AS
  ((h64(seed, k * 128 + tag) >> 11)::DOUBLE / 9007199254740992.0);
-- A standard normal (Box–Muller) from draws `tag` and `tag + 64` of entity `k`.
CREATE OR REPLACE TEMP MACRO normal01(seed, k, tag) AS
  (sqrt(-2.0 * ln(1.0 - u01(seed, k, tag))) * cos(2.0 * pi() * u01(seed, k, tag + 64)));
-- The i-th (0–3) 16-bit slice of a 64-bit hash as a uniform in [0, 1): four cheap draws per hash.
CREATE OR REPLACE TEMP MACRO u16(h, i) AS (((h >> (16 * i)) & 65535)::DOUBLE / 65536.0);
