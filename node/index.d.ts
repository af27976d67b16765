/** The profsum.so this package loads (PROFSUM_SO, the packed copy, or a checkout's). */
export function getLoadablePath(): string;
/** Load profsum.so into a better-sqlite3 Database; returns it. */
export function load<T extends { loadExtension(path: string): unknown }>(db: T): T;
/** The package's version (that of profsum). */
export const version: string;
