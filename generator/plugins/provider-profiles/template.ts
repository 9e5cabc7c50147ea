/*
 * generated/provider-profiles.ts: the provider profiles of spec/providers/ (files with a `submit`
 * section), checked by the generator (generator/load/profile.ts) and executed by one runtime
 * adapter (runtime/upstreams/profile-upstream.ts). The vocabulary: spec/providers/README.md.
 */
export type ProfileState = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export type ProfileMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
/** The failure classes a 2xx answer's business error may have (runtime/deployments/upstream-error.ts). */
export type ProfileErrorClass = 'busy' | 'server' | 'unauthorized' | 'rejected' | 'lost' | 'protocol';

/** A status value's state, or a condition on another member of the answer. */
export type ProfileStateRule =
  | ProfileState
  | { when: string; equals?: string | number | boolean; is: ProfileState; otherwise: ProfileState };

/** A call listing the key's jobs (each matched by creation time and the request's fingerprint), or one reading a job by the id the submit chose. */
export type ProfileFind =
  | {
      list: {
        method: ProfileMethod;
        path: string;
        items: string;
        handle: Record<string, string>;
        createdAt: string;
        match: Record<string, string>;
        more?: string;
      };
    }
  | { byId: { method: ProfileMethod; path: string; handle: Record<string, string>; absent: number[] } };

export interface ProviderProfile {
  name: string;
  auth: { scheme: 'bearer' | 'key' | 'header' | 'jwt-hs256' | 'none'; header?: string };
  headers: Record<string, string>;
  submit: {
    method: ProfileMethod;
    /** One path, or one per catalogue mode (a mode not named is not served). */
    path: string | Record<string, string>;
    body?: unknown;
    /** `body` is a map of catalogue mode to that mode's body. */
    bodyByMode?: true;
    handle: Record<string, string>;
    lookup?: { method: ProfileMethod; path: string; handle: Record<string, string> };
    deadlineSeconds?: { min: number; max: number };
  };
  poll: {
    method: ProfileMethod;
    path: string;
    state: string;
    states: Record<string, ProfileStateRule>;
    reason?: string;
    progress?: string;
    progressMax: number;
    capture: Record<string, string>;
  };
  /** Where the media links are: in the status answer, or (with `follow`) in a second request's answer. */
  result: { urls: string; follow?: { method: ProfileMethod; path: string } };
  cancel?: { method: ProfileMethod; path: string };
  probe?: { method: ProfileMethod; path: string; ok: number[] };
  /** How a job is found without its handle after a submit whose outcome is unknown (spec/providers/README.md). */
  find?: ProfileFind;
  errors?: {
    code: string;
    ok: (string | number | boolean)[];
    reason?: string;
    classes: Record<string, ProfileErrorClass>;
    otherwise: ProfileErrorClass;
  };
}

const PROFILES: Record<string, ProviderProfile> = {};

/** The names a deployments file may give as `kind` for a profile. */
export const PROFILE_NAMES: readonly string[] = Object.keys(PROFILES);

/** The profile of that name, if spec/providers/ has one. */
export function providerProfile(name: string): ProviderProfile | undefined {
  return Object.hasOwn(PROFILES, name) ? PROFILES[name] : undefined;
}
