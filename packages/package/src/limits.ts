/** The file name of a package's signed envelope, at the root of the package directory. */
export const ENVELOPE_FILE = 'heddle-package.json';

/** The `schema` of a package envelope and of its statement. */
export const PACKAGE_SCHEMA = 'heddle.package.v1';

/** Largest accepted envelope (`heddle-package.json`): 1 MiB. */
export const MAX_ENVELOPE_BYTES: number = 1024 * 1024;

/** Default largest single file of a package: 256 MiB (configurable per verification). */
export const DEFAULT_MAX_FILE_BYTES: number = 256 * 1024 * 1024;

/** Default largest sum of a package's file sizes: 1 GiB (configurable per verification). */
export const DEFAULT_MAX_TOTAL_BYTES: number = 1024 * 1024 * 1024;

/** Most files one package may list. */
export const MAX_FILES = 1024;

/** Most signatures one envelope may carry. */
export const MAX_SIGNATURES = 32;

/** Size limits applied by build and verify. */
export interface SizeLimits {
  /** Largest single file in bytes (default {@link DEFAULT_MAX_FILE_BYTES}). */
  readonly maxFileBytes?: number;
  /** Largest sum of file sizes in bytes (default {@link DEFAULT_MAX_TOTAL_BYTES}). */
  readonly maxTotalBytes?: number;
}
