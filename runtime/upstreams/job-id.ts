/**
 * Whether an upstream's job id can name its job in a request path: not empty and not a dot-segment.
 * `encodeURIComponent` leaves dots as they are, so an id `..` would make a poll or cancel path
 * climb a segment (`/videos/..` is `/`): a request to another resource of the upstream. Such an id
 * is a protocol failure of the submit, never a handle.
 */
export function usableJobId(id: string): boolean {
  return id !== '' && id !== '.' && id !== '..';
}
