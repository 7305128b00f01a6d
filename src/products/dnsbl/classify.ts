/**
 * What one zone's answer means: the shared blocklist-zone rules (lib/blocklist-zone.ts). Only a
 * code the zone defines as a listing is a listing; an error code, an address outside
 * 127.0.0.0/8 or an undefined code makes the zone's answer unusable, which is not "clean".
 */
export { classifyAnswer, classifyFailure, type ZoneVerdict } from '../../lib/blocklist-zone.js';
