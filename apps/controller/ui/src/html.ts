import htm from 'htm';
import { h, type VNode } from 'preact';

/** Preact's `h` bound to htm's tagged templates: `html\`<p>${text}</p>\``. */
// cast: htm's bound tag is typed loosely by htm itself; every template here yields one Preact node.
export const html = htm.bind(h) as (strings: TemplateStringsArray, ...values: unknown[]) => VNode;
