import type { TaskRow } from './task-record.js';

/**
 * Objects stored for one task's input: the compatible layer's uploaded reference image (a file
 * part or a data: URL of POST /v1/videos). The key is the task's own id, so no two tasks share an
 * object (deleting one video never breaks another's link, no reference count is needed) and a
 * purge finds the object from the task record alone.
 */
export const INPUT_UPLOAD_EXTENSIONS = ['png', 'jpg', 'webp'] as const;

export function inputUploadKey(taskId: string, extension: (typeof INPUT_UPLOAD_EXTENSIONS)[number]): string {
  return `uploads/${taskId}.${extension}`;
}

/** The input upload keys a task's record links to (its input holds the signed link, key percent-encoded). */
export function inputUploadKeysOf(task: Pick<TaskRow, 'id' | 'input_json'>): string[] {
  const input = task.input_json;
  if (!input) return [];
  return INPUT_UPLOAD_EXTENSIONS.map((ext) => inputUploadKey(task.id, ext)).filter((key) =>
    input.includes(encodeURIComponent(key)),
  );
}
