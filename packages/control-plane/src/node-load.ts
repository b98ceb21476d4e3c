import { isGone } from '@heddle/model';
import { type NodeLoad, PLACEMENT_STATES } from './state-store.js';

// What one node holds in the shared state (schema v10), read the same way by every store: three
// aggregates over one node's rows, each through an index on node_id (placements_by_node,
// unsettled_by_node, place_claims_by_node), so the cost follows the node's rows, never the fleet's.

/** The placement states that hold nothing on their node (`isGone`), as a SQL list of literals. */
const GONE_SQL = PLACEMENT_STATES.filter((s) => isGone(s))
  .map((s) => `'${s}'`)
  .join(', ');

/**
 * The statement reading {@link NodeLoad}: `node` is the placeholder of the node id, `since` the one
 * of the claims' cut-off (`@node`/`@since` for SQLite, `$1`/`$2` for PostgreSQL). One row per source
 * (`k`: `p` placements, `u` unsettled, `c` claims) with its count and sums; the claims' row also
 * counts those before the cut-off (`stale`).
 */
export function nodeLoadSql(node: string, since: string): string {
  const live = `claimed_at_ms >= ${since}`;
  return `SELECT 'p' AS k, COUNT(*) AS n, COALESCE(SUM(ram_mb), 0) AS ram, COALESCE(SUM(cpu_pct), 0) AS cpu, 0 AS stale FROM placements WHERE node_id = ${node} AND state NOT IN (${GONE_SQL})
UNION ALL SELECT 'u', COUNT(*), COALESCE(SUM(ram_mb), 0), COALESCE(SUM(cpu_pct), 0), 0 FROM unsettled WHERE node_id = ${node}
UNION ALL SELECT 'c', COALESCE(SUM(CASE WHEN ${live} THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN ${live} THEN ram_mb ELSE 0 END), 0), COALESCE(SUM(CASE WHEN ${live} THEN cpu_pct ELSE 0 END), 0), COALESCE(SUM(CASE WHEN ${live} THEN 0 ELSE 1 END), 0) FROM place_claims WHERE node_id = ${node}`;
}

/** The rows of {@link nodeLoadSql} as a {@link NodeLoad} (PostgreSQL answers sums as strings). */
export function nodeLoadOf(rows: readonly Record<string, unknown>[]): NodeLoad {
  const load = { ram_mb: 0, cpu_pct: 0, placements: 0, unsettled: 0, claims: 0, stale_claims: 0 };
  for (const r of rows) {
    const n = Number(r.n);
    load.ram_mb += Number(r.ram);
    load.cpu_pct += Number(r.cpu);
    if (r.k === 'p') load.placements = n;
    else if (r.k === 'u') load.unsettled = n;
    else {
      load.claims = n;
      load.stale_claims = Number(r.stale);
    }
  }
  return load;
}
