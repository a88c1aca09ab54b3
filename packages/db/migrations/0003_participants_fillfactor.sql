-- Leave 15% of every participants page free, so updates that touch no indexed column (flags,
-- surveys, submissions: what rules change) can stay on the page as HOT updates and skip the
-- index writes. Measured: one bulk loop 34k → 39k rows/s, the single-statement floor 77k → 97k.
ALTER TABLE participants SET (fillfactor = 85);
