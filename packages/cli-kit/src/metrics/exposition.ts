/** One metric family as the text exposition writes it. */
export interface ExpositionFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly samples: readonly ExpositionSample[];
}

/** One sample line: the sample's name (a histogram's carries `_bucket`, `_sum`, `_count`), labels, value. */
export interface ExpositionSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The content type of the text exposition format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A label value escaped for the exposition: backslash, double quote and newline. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value as the format writes it: `+Inf`, `-Inf`, `NaN` or a JavaScript number. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/**
 * The Prometheus text exposition (format 0.0.4) of `families`: a `# HELP` and `# TYPE` line per
 * family, then one line per sample (`name{label="value",...} value`), ending with a newline.
 */
export function renderExposition(families: readonly ExpositionFamily[]): string {
  let out = '';
  for (const f of families) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
        .join(',');
      out += `${s.name}${labels === '' ? '' : `{${labels}}`} ${formatValue(s.value)}\n`;
    }
  }
  return out;
}
