import type { CliIo } from '../io.js';

/** The colours `heddle` uses: states and verdicts, never meaning carried by colour alone. */
export type ColourName = 'green' | 'red' | 'yellow' | 'cyan' | 'dim' | 'bold';

const CODES: Readonly<Record<ColourName, readonly [number, number]>> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** Paints text in a colour, or returns it unchanged when colour is off. */
export type Paint = (name: ColourName, text: string) => string;

/**
 * Whether colour is on for standard output: only when it is a terminal and `NO_COLOR` is unset or
 * empty (https://no-color.org), and never with `--json`.
 */
export function colourEnabled(io: Pick<CliIo, 'isTty' | 'env'>, json = false): boolean {
  if (json || io.isTty !== true) return false;
  const noColor = io.env?.NO_COLOR;
  return noColor === undefined || noColor === '';
}

/** A painter: ANSI colour when `enabled`, the identity otherwise. */
export function painter(enabled: boolean): Paint {
  if (!enabled) return (_name, text) => text;
  return (name, text) => {
    const [on, off] = CODES[name];
    return `\u001b[${on}m${text}\u001b[${off}m`;
  };
}

/** The painter for `io` (see {@link colourEnabled}). */
export function paintFor(io: Pick<CliIo, 'isTty' | 'env'>, json = false): Paint {
  return painter(colourEnabled(io, json));
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** `text` without ANSI colour codes. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The printed width of `text` (colour codes take none). */
export function visibleWidth(text: string): number {
  return [...stripAnsi(text)].length;
}

/** The colour of a state or verdict word: good green, bad red, in-between yellow, else none. */
export function stateColour(word: string): ColourName | undefined {
  switch (word) {
    case 'running':
    case 'alive':
    case 'placed':
    case 'chosen':
    case 'pinned':
    case 'ok':
      return 'green';
    case 'failed':
    case 'lost':
    case 'dead':
    case 'rejected':
    case 'refused':
    case 'unreachable':
    case 'gate_denied':
      return 'red';
    case 'suspect':
    case 'stopped':
    case 'unknown':
    case 'indeterminate':
    case 'unsettled':
    case 'skipped':
    case 'candidate':
      return 'yellow';
    case 'unloaded':
      return 'dim';
    default:
      return undefined;
  }
}

/** `word` painted in its {@link stateColour}. */
export function paintState(paint: Paint, word: string): string {
  const c = stateColour(word);
  return c === undefined ? word : paint(c, word);
}
