/** What other modules may use of files: stored bytes, signed URLs and uploads made on the server side. */
export { fileRuntime } from './files.runtime.js';
export { findCompletedFile, generatePreviewNow, purgeFileBytes, uploadFile } from './files.service.js';
export { createFileStore, type FileStore } from './files.storage.js';
export { readCompletedFile } from './files.service.js';
