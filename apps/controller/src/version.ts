import packageJson from '../package.json' with { type: 'json' };

/** The name this program is published under (`heddle`). */
export const PROGRAM: string = packageJson.name;

/** This program's version (its package.json `version`; bundled into the built file). */
export const VERSION: string = packageJson.version;
