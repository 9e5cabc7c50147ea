// Types of scripts/build-state.mjs (plain JavaScript, so that it runs before anything is compiled).
export declare const ROOT: string;
export declare const DIST: string;
export declare const BUILD_INFO: string;
export declare function inputFingerprint(): string;
export declare function buildState(): 'current' | 'stale' | 'missing';
