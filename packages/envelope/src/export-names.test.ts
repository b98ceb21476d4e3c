import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { typeExportNames } from './export-names.js';

describe('typeExportNames', () => {
  it('reads type-only clauses, inline `type` members and renames, and skips values', () => {
    const source = [
      "export { a, type B, c as d, type E as F } from './x.js';",
      "export type { G, H as I } from './y.js';",
      "export type {\n  J,\n  K,\n} from './z.js';",
      "export { l } from './w.js';",
    ].join('\n');
    expect(typeExportNames(source)).toEqual(['B', 'F', 'G', 'I', 'J', 'K']);
  });

  it('an entry with no type exports has none, whatever its value exports', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/), { maxLength: 8 }), (values) => {
        const source = values.map((v) => `export { ${v} } from './${v}.js';`).join('\n');
        expect(typeExportNames(source)).toEqual([]);
      }),
    );
  });
});
