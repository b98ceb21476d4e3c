/**
 * The names a TypeScript entry file exports as types only, sorted: every name of an
 * `export type { ... }` clause and every `type X` inside an `export { ... }` clause (the name after
 * `as` when renamed). Value exports are read at run time (`Object.keys` of the module); type exports
 * leave no trace there, so the export snapshot tests of every package read them from the entry's text.
 */
export function typeExportNames(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    const wholeClauseIsTypes = m[1] !== undefined;
    for (const raw of (m[2] ?? '').split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      if (!wholeClauseIsTypes && !part.startsWith('type ')) continue;
      const spec = wholeClauseIsTypes ? part : part.slice(5);
      names.push(
        spec
          .split(/\s+as\s+/)
          .pop()
          ?.trim() ?? spec,
      );
    }
  }
  return names.sort();
}
