// Bundled in place of zod's `v4/locales/index.js` (see tsup.config.ts): zod's namespace export
// `z.locales` would otherwise pull every locale (about 360 KB, a third of what a CLI command loads)
// into each command that uses zod. Heddle uses only English messages, set by zod itself at import.
// cast: none; the one locale zod configures by default, under its own name.
export { default as en } from 'zod/v4/locales/en.js';
