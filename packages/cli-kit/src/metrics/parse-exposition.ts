/** One sample read back from a text exposition. */
export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A text exposition read back: each family's type and help, and every sample in order. */
export interface ParsedExposition {
  readonly types: ReadonlyMap<string, string>;
  readonly help: ReadonlyMap<string, string>;
  readonly samples: readonly ParsedSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE_RE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL_RE = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/;

function unescapeText(v: string): string {
  return v.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

function value(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) throw new Error(`bad value in line: ${line}`);
  return v;
}

/**
 * Reads a Prometheus text exposition (format 0.0.4) strictly, for tests: every line is a `# HELP`,
 * `# TYPE`, other comment or sample line; a sample's family must have been typed before it; label
 * values are unescaped. Throws naming the first line it cannot read.
 */
export function parseExposition(text: string): ParsedExposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: ParsedSample[] = [];
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta !== null) {
      const [, what, name = '', rest = ''] = meta;
      if (what === 'TYPE') {
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(rest)) throw new Error(`bad type: ${line}`);
        if (types.has(name)) throw new Error(`family typed twice: ${line}`);
        types.set(name, rest);
      } else help.set(name, unescapeText(rest));
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE_RE.exec(line);
    if (m === null) throw new Error(`bad sample line: ${line}`);
    const [, name = '', labelText = '', valueText = ''] = m;
    const family = [name, name.replace(/_(bucket|sum|count)$/, '')].find((n) => types.has(n));
    if (family === undefined) throw new Error(`sample of an untyped family: ${line}`);
    const labels: Record<string, string> = {};
    let rest = labelText;
    while (rest.length > 0) {
      const l = LABEL_RE.exec(rest);
      if (l === null) throw new Error(`bad labels in line: ${line}`);
      const [all, k = '', v = ''] = l;
      if (k in labels) throw new Error(`label twice in line: ${line}`);
      labels[k] = unescapeText(v);
      rest = rest.slice(all.length);
    }
    samples.push({ name, labels, value: value(valueText, line) });
  }
  return { types, help, samples };
}

/**
 * The value of the sample `name` whose labels include every one of `labels` (the sum when several
 * match, 0 when none does).
 */
export function sampleValue(
  parsed: ParsedExposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  let total = 0;
  for (const s of parsed.samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}
