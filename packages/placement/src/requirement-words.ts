import type { AttrValue } from './capability.js';
import type { Predicate, Requirement, RequirementReason } from './requirement.js';

function valueText(v: AttrValue): string {
  return Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).join(', ')}]` : JSON.stringify(v);
}

/** A predicate in words (`arches_native includes "aarch64"`, `memory_mb >= 4096`). */
export function predicateText(p: Predicate): string {
  switch (p.op) {
    case 'eq':
      return `${p.attr} = ${valueText(p.value)}`;
    case 'gte':
      return `${p.attr} >= ${valueText(p.value)}`;
    case 'lte':
      return `${p.attr} <= ${valueText(p.value)}`;
    case 'in':
      return `${p.attr} is one of ${valueText(p.value)}`;
    case 'has':
      return `${p.attr} includes ${valueText(p.value)}`;
  }
}

/**
 * Why requirement `req` is not met on a node, in words an operator reads, from its stable `reason`
 * (`node has no capability cpu.arch.aarch64`, `no runtime.container.* capability of the node has
 * arches_native includes "aarch64"`). The reason code itself stays in the decision's JSON.
 */
export function requirementFailureText(req: Requirement, reason: RequirementReason): string {
  const prefix = req.id === undefined;
  const what = req.id ?? `${req.id_prefix ?? ''}.*`;
  const count = req.count ?? 1;
  const where = (req.where ?? []).map(predicateText).join(' and ');
  const min = req.min_provenance ?? 'claimed';
  switch (reason) {
    case 'no_such_id':
      return prefix ? `node has no ${what} capability` : `node has no capability ${what}`;
    case 'provenance_too_low':
      return prefix
        ? `no ${what} capability of the node is known at least as ${min} (provenance)`
        : `node's ${what} is not known at least as ${min} (provenance)`;
    case 'predicate_failed':
      return prefix
        ? `no ${what} capability of the node has ${where}`
        : `node's ${what} does not have ${where}`;
    case 'unavailable':
      return prefix
        ? `every matching ${what} capability of the node is reserved or busy`
        : `node's ${what} is reserved or busy`;
    case 'contended':
      if (count > 1)
        return `fewer than ${count} matching ${what} capabilities of the node are free (the others are held by other workloads)`;
      return prefix
        ? `every matching ${what} capability of the node is held by another workload`
        : `node's ${what} is held by another workload`;
    case 'insufficient_count':
      return `node has fewer than ${count} usable ${what} capabilities`;
  }
}
