import { LabelName, LabelValue } from '@heddle/control-plane/contract';
import { badValue } from './command-def.js';

// The label words of the command line: `heddle node label <node> room=kitchen camera- ...` and
// `heddle place --constraint label.room=kitchen --spread room`. Each word is checked where it is
// typed, naming the word, with the same rules as the operator API's.

function checkName(field: string, word: string, name: string): void {
  const r = LabelName.safeParse(name);
  if (!r.success)
    throw badValue(field, `${JSON.stringify(word)}: ${r.error.issues[0]?.message ?? 'invalid'}`);
}

function checkValue(field: string, word: string, value: string): void {
  const r = LabelValue.safeParse(value);
  if (!r.success)
    throw badValue(field, `${JSON.stringify(word)}: ${r.error.issues[0]?.message ?? 'invalid'}`);
}

/**
 * `key=value` words (set) and `key-` words (remove), as kubectl's `label`: at least one; a label
 * both set and removed, or set twice, is refused; a bad name or value is refused (`invalid_input`,
 * exit 3) naming the word.
 */
export function parseLabelWords(words: readonly string[]): {
  set: Record<string, string>;
  remove: string[];
} {
  if (words.length === 0) throw badValue('labels', 'give at least one key=value (set) or key- (remove)');
  const set: Record<string, string> = {};
  const remove: string[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    const eq = word.indexOf('=');
    let name: string;
    if (eq >= 0) {
      name = word.slice(0, eq);
      checkName('labels', word, name);
      checkValue('labels', word, word.slice(eq + 1));
      set[name] = word.slice(eq + 1);
    } else if (word.endsWith('-')) {
      name = word.slice(0, -1);
      checkName('labels', word, name);
      remove.push(name);
    } else {
      throw badValue('labels', `${JSON.stringify(word)}: expected key=value (set) or key- (remove)`);
    }
    if (seen.has(name)) throw badValue('labels', `${JSON.stringify(word)}: label ${name} is named twice`);
    seen.add(name);
  }
  return { set, remove };
}

/** `label.<name>=<value>`: a placement constraint on a node label (refused naming `constraint`). */
export function parseConstraint(word: string): { label: string; value: string } {
  const m = /^label\.([^=]*)=(.*)$/s.exec(word);
  if (m === null) throw badValue('constraint', `${JSON.stringify(word)}: expected label.<name>=<value>`);
  const [, name = '', value = ''] = m;
  checkName('constraint', word, name);
  checkValue('constraint', word, value);
  return { label: name, value };
}

/** A `--spread` label name (refused naming `spread`). */
export function parseSpread(word: string): string {
  checkName('spread', word, word);
  return word;
}
