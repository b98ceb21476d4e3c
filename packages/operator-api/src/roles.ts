/** The roles of operators, least to most: what each may do is named per route (`OPERATOR_ROUTES[name].role`). */
export const ROLES = ['viewer', 'operator', 'admin'] as const;

/**
 * An operator's role: `viewer` reads (GET routes), `operator` also places and operates instances,
 * nodes' cordon, drain and labels, and approvals, `admin` also adds and removes nodes, pushes
 * revocations and manages operators.
 */
export type Role = (typeof ROLES)[number];

/** Whether `held` is at least `needed`. */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}
