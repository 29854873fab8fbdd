/** What other modules may use of assets. */
export { liveAssetFileId } from './assets.service.js';
